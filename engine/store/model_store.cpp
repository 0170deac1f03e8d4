#include "store/model_store.h"

#include "io/checkpoint.h"
#include "models/activation_scheme.h"
#include "util/error.h"
#include "util/log.h"
#include "util/overrides.h"
#include "util/paths.h"
#include "util/regular_file.h"
#include "util/sha256.h"
#include "util/text.h"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <optional>

namespace dragoman {
namespace {

std::string readText(const std::filesystem::path& path) {
    requireRegularFile(path);
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A manifest file name for an id: readable, and safe for any id.
std::string manifestKey(const std::string& id) {
    std::string key;
    for (char c : id)
        key += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') ? c : '~';
    return key;
}

}  // namespace

std::string_view sourceName(ModelSource source) {
    switch (source) {
        case ModelSource::Bundled:
            return "bundled";
        case ModelSource::Cache:
            return "cache";
        case ModelSource::Imported:
            return "imported";
        case ModelSource::HubCache:
            return "hf-hub";
        case ModelSource::Path:
            return "path";
    }
    return "path";
}

StoreRoots StoreRoots::fromEnvironment() {
    StoreRoots roots{paths::modelCacheDir(), paths::huggingFaceHubDir(), {}};
    if (const auto& bundled = environmentOverrides().bundledModels; !bundled.empty()) roots.bundled.push_back(bundled);
    roots.bundled.push_back(paths::installedDataDir() / "models");
#ifdef DRAGOMAN_SOURCE_RESOURCES
    roots.bundled.push_back(std::filesystem::path(DRAGOMAN_SOURCE_RESOURCES) / "models");
#endif
    return roots;
}

// A PEFT adapter folder (adapter_config.json, no config.json): listed and hashed like a model, loaded on top of one.
std::optional<ModelEntry> describeAdapterFolder(const std::filesystem::path& dir, std::string id, ModelSource source) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(dir / "adapter_config.json", ec)) return std::nullopt;
    ModelEntry entry{std::move(id), dir, source, {}, "LoRA adapter", "peft_lora", 0, {}, {}};
    try {
        const auto config = nlohmann::json::parse(readText(dir / "adapter_config.json"));
        if (config.contains("base_model_name_or_path") && config["base_model_name_or_path"].is_string())
            entry.base = config["base_model_name_or_path"].get<std::string>();
    } catch (const std::exception&) {
        // Listed anyway: loading it reports what is wrong.
    }
    entry.weightBytes = std::filesystem::file_size(dir / "adapter_model.safetensors", ec);
    if (ec) entry.weightBytes = 0;
    return entry;
}

// "int8", "w8a8" (int8 activations too) or "fp8" for the 8-bit layouts the engine computes, else the method's own
// name; "" for none.
static std::string quantizationName(const nlohmann::json& config) {
    if (!config.contains("quantization_config") || !config["quantization_config"].is_object()) return {};
    const auto& q = config["quantization_config"];
    const auto method = q.contains("quant_method") && q["quant_method"].is_string() ? q["quant_method"].get<std::string>() : "";
    const auto format = q.contains("format") && q["format"].is_string() ? q["format"].get<std::string>() : "";
    if (method == "fp8" || (method == "compressed-tensors" && format == "float-quantized")) return "fp8";
    if (method == "compressed-tensors" && format == "int-quantized") {
        const bool w8a8 = q.contains("config_groups") && q["config_groups"].is_object() && !q["config_groups"].empty() &&
                          std::all_of(q["config_groups"].begin(), q["config_groups"].end(), declaresInt8ActivationsPerToken);
        return w8a8 ? "w8a8" : "int8";
    }
    if (method == "compressed-tensors" && format == "naive-quantized" && q.contains("config_groups") && q["config_groups"].is_object())
        for (const auto& group : q["config_groups"])
            if (group.is_object() && group.contains("weights") && group["weights"].is_object()) {
                const auto type = group["weights"].value("type", std::string());
                if (type == "int" || type == "float") return type == "int" ? "int8" : "fp8";
            }
    return method.empty() ? "quantized" : method;
}

std::optional<ModelEntry> describeModelFolder(const std::filesystem::path& dir, std::string id, ModelSource source) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(dir / "config.json", ec)) return describeAdapterFolder(dir, std::move(id), source);
    ModelEntry entry{std::move(id), dir, source, {}, {}, {}, 0, {}, {}};
    try {
        const auto config = nlohmann::json::parse(readText(dir / "config.json"));
        entry.modelType = config.value("model_type", "");
        if (config.contains("architectures") && config["architectures"].is_array() && !config["architectures"].empty())
            entry.architecture = config["architectures"][0].get<std::string>();
        entry.quantization = quantizationName(config);
    } catch (const std::exception&) {
        // Listed anyway: the load reports what is wrong with the config.
    }
    try {
        for (const auto& file : checkpointFiles(dir))
            entry.weightBytes += std::filesystem::file_size(file, ec);
    } catch (const Error&) {
    }
    return entry;
}

ModelStore::ModelStore(StoreRoots roots) : roots_(std::move(roots)) {}

std::vector<ModelEntry> ModelStore::scanFolder(const std::filesystem::path& root, ModelSource source) const {
    std::vector<ModelEntry> entries;
    std::error_code ec;
    if (!std::filesystem::is_directory(root, ec)) return entries;
    for (const auto& child : std::filesystem::directory_iterator(root, ec)) {
        const auto name = child.path().filename().string();
        if (name.empty() || name[0] == '.' || name == "manifests") continue;
        if (auto entry = describeModelFolder(child.path(), name, source)) entries.push_back(*entry);
    }
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return entries;
}

std::vector<ModelEntry> ModelStore::scanImported() const {
    std::vector<ModelEntry> entries;
    std::error_code ec;
    const auto dir = roots_.cache / "manifests" / "imported";
    if (!std::filesystem::is_directory(dir, ec)) return entries;
    for (const auto& file : std::filesystem::directory_iterator(dir, ec)) {
        if (file.path().extension() != ".json") continue;
        std::optional<Manifest> manifest;
        try {
            manifest = readManifest(file.path());
        } catch (const Error& e) {
            // Damaged on disk (we never write a partial one): the import is kept if its folder is still named;
            // its files are hashed again on the next load (ensureManifest).
            manifest = salvageManifestHead(file.path());
            log::logger().warn("manifest {} is damaged ({}): {}", file.path().string(), e.what(),
                               manifest ? "the model stays imported and is hashed again when it is next loaded"
                                        : "it no longer says which folder it records; import that folder again");
        }
        if (!manifest) continue;
        if (auto entry = describeModelFolder(manifest->dir, manifest->id, ModelSource::Imported)) entries.push_back(*entry);
    }
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return entries;
}

std::vector<ModelEntry> ModelStore::scanHub() const {
    std::vector<ModelEntry> entries;
    std::error_code ec;
    if (!std::filesystem::is_directory(roots_.hub, ec)) return entries;
    for (const auto& repo : std::filesystem::directory_iterator(roots_.hub, ec)) {
        const auto name = repo.path().filename().string();
        if (name.rfind("models--", 0) != 0) continue;
        // models--ORG--NAME: the hub escapes '/' as "--".
        std::string id = name.substr(8);
        if (auto pos = id.find("--"); pos != std::string::npos) id.replace(pos, 2, "/");
        // The snapshot "main" points at, else the most recently written one.
        std::string revision = readText(repo.path() / "refs" / "main");
        while (!revision.empty() && std::isspace(static_cast<unsigned char>(revision.back())))
            revision.pop_back();
        std::filesystem::path snapshot;
        if (!revision.empty() && std::filesystem::is_directory(repo.path() / "snapshots" / revision, ec)) {
            snapshot = repo.path() / "snapshots" / revision;
        } else {
            std::filesystem::file_time_type newest{};
            for (const auto& snap : std::filesystem::directory_iterator(repo.path() / "snapshots", ec)) {
                const auto time = std::filesystem::last_write_time(snap.path(), ec);
                if (snapshot.empty() || time > newest) {
                    snapshot = snap.path();
                    newest = time;
                }
            }
            revision = snapshot.filename().string();
        }
        if (snapshot.empty()) continue;
        if (auto entry = describeModelFolder(snapshot, id, ModelSource::HubCache)) {
            entry->revision = revision;
            entries.push_back(*entry);
        }
    }
    std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
    return entries;
}

std::vector<ModelEntry> ModelStore::list() const {
    std::vector<ModelEntry> all;
    for (const auto& root : roots_.bundled) {
        auto found = scanFolder(root, ModelSource::Bundled);
        for (auto& entry : found) {
            const bool duplicate = std::any_of(all.begin(), all.end(), [&](const auto& e) { return e.id == entry.id; });
            if (!duplicate) all.push_back(std::move(entry));
        }
    }
    auto imported = scanImported();
    all.insert(all.end(), imported.begin(), imported.end());
    auto cached = scanFolder(roots_.cache, ModelSource::Cache);
    all.insert(all.end(), cached.begin(), cached.end());
    auto hub = scanHub();
    all.insert(all.end(), hub.begin(), hub.end());
    return all;
}

ModelEntry ModelStore::resolve(const std::string& idOrPath) const {
    std::error_code ec;
    if (std::filesystem::is_directory(idOrPath, ec)) {
        const auto dir = std::filesystem::absolute(idOrPath).lexically_normal();
        if (auto entry = describeModelFolder(dir, dir.string(), ModelSource::Path)) return *entry;
        throw Error("model_not_found", idOrPath + " has no config.json: not a model folder in Hugging Face layout (nor an adapter)");
    }
    for (const auto& entry : list())
        if (entry.id == idOrPath) return entry;
    throw Error("model_not_found", "no model '" + idOrPath + "' (see 'dragoman-cli models list'; a folder path works too)");
}

ModelEntry ModelStore::defaultModel() const {
    for (const auto& root : roots_.bundled) {
        auto found = scanFolder(root, ModelSource::Bundled);
        if (!found.empty()) return found.front();
    }
    throw Error("model_not_found", "no default model is installed; add one with 'dragoman-cli models import DIR' and pass --model");
}

void ModelStore::forget(const ModelEntry& entry) const {
    if (entry.source != ModelSource::Imported)
        throw Error("input", entry.id + " is " + std::string(sourceName(entry.source)) +
                                 ", not imported: only imported models are forgotten (" + entry.dir.string() +
                                 " is left as it is; delete it yourself if you mean to)");
    std::error_code ec;
    std::filesystem::remove(manifestPath(entry), ec);
    if (ec) throw Error("io", "cannot forget " + entry.id + ": " + ec.message());
}

std::filesystem::path ModelStore::manifestPath(const ModelEntry& entry) const {
    const auto base = roots_.cache / "manifests";
    switch (entry.source) {
        case ModelSource::Imported:
            return base / "imported" / (manifestKey(entry.id) + ".json");
        case ModelSource::HubCache:
            return base / "hf-hub" / (manifestKey(entry.id) + "@" + manifestKey(entry.revision) + ".json");
        case ModelSource::Bundled:
            return base / "bundled" / (manifestKey(entry.id) + ".json");
        case ModelSource::Cache:
            return base / "cache" / (manifestKey(entry.id) + ".json");
        case ModelSource::Path: {
            // Keyed by the folder's absolute path, so two folders of the same name never share a record.
            const auto path = entry.dir.string();
            const auto digest = sha256Hex(std::as_bytes(std::span(path.data(), path.size()))).substr(0, 16);
            return base / "path" / (manifestKey(entry.dir.filename().string()) + "-" + digest + ".json");
        }
    }
    return base / "path" / (manifestKey(entry.id) + ".json");
}

Manifest ModelStore::ensureManifest(const ModelEntry& entry, const HashProgress& progress) const {
    const auto path = manifestPath(entry);
    const bool bundled = entry.source == ModelSource::Bundled;
    std::error_code ec;
    std::optional<Manifest> recorded;
    if (std::filesystem::exists(path, ec)) {
        try {
            recorded = readManifest(path);
        } catch (const Error& e) {
            log::warn({entry.id}, "manifest {} is damaged ({}): hashing {} again", path.string(), e.what(), entry.dir.string());
        }
    } else {
        log::info({entry.id}, "first sight of {}: hashing its files once", entry.dir.string());
    }
    if (recorded) {
        auto& manifest = *recorded;
        if (std::filesystem::equivalent(manifest.dir, entry.dir, ec)) {
            // A bundled model changes when the application is updated, not by accident: it is hashed again
            // and checked against the checksums it ships with, instead of being refused.
            if (!bundled || statMismatches(manifest).empty()) return manifest;
            log::info({entry.id}, "bundled model {} changed since it was hashed (an application update): hashing it again",
                      entry.dir.string());
        }
    }
    auto manifest = buildManifest(entry.id, entry.dir, progress);
    if (bundled) checkShippedChecksums(manifest);
    try {
        writeManifest(path, manifest);
    } catch (const std::exception& e) {
        // A read-only cache must not stop the load; the next load hashes again.
        log::warn({entry.id}, "cannot record manifest {}: {}", path.string(), e.what());
    }
    return manifest;
}

Manifest ModelStore::ensureUnchanged(const ModelEntry& entry, const HashProgress& progress) const {
    auto manifest = ensureManifest(entry, progress);
    if (auto problems = statMismatches(manifest); !problems.empty())
        throw Error("integrity", entry.id + ": " + joinProblems(problems) + ". Run 'dragoman-cli models verify " + entry.id +
                                     " --full' to re-check, or re-import the model");
    return manifest;
}

ModelEntry ModelStore::importModel(const std::filesystem::path& dir, std::string id, const HashProgress& progress) const {
    const auto absolute = std::filesystem::absolute(dir).lexically_normal();
    if (id.empty()) id = absolute.filename().string();
    auto entry = describeModelFolder(absolute, id, ModelSource::Imported);
    if (!entry) throw Error("model_not_found", dir.string() + " has no config.json: not a model folder in Hugging Face layout");
    // One id, one model: an id another model has (bundled, cached, imported from another folder) is refused, and so
    // is one whose record another id already holds (ids that differ only where a file name cannot: "a/b", "a~b").
    // Importing the same folder under its id again hashes it again.
    std::error_code ec;
    for (const auto& existing : list()) {
        if (existing.id != id) continue;
        if (existing.source == ModelSource::Imported && std::filesystem::equivalent(existing.dir, absolute, ec)) continue;
        throw Error("input", "the id " + id + " is taken by the " + std::string(sourceName(existing.source)) + " model in " +
                                 existing.dir.string() + ": choose another with --id" +
                                 (existing.source == ModelSource::Imported ? ", or 'models forget " + id + "' first" : ""));
    }
    const auto record = manifestPath(*entry);
    if (std::filesystem::exists(record, ec)) {
        std::optional<Manifest> recorded;
        try {
            recorded = readManifest(record);
        } catch (const Error&) {
            // a damaged record of this key is replaced
        }
        if (recorded && recorded->id != id)
            throw Error("input", "the id " + id + " would share its record with the imported model " + recorded->id +
                                     " (ids that differ only in characters a file name cannot hold): choose another with --id");
    }
    // The weights are opened and checked once here (header, offsets, sizes), so a truncated or corrupt file is
    // refused at import rather than recorded and hashed as good.
    if (entry->modelType == "peft_lora") {
        if (!std::filesystem::is_regular_file(absolute / "adapter_model.safetensors"))
            throw Error("adapter", dir.string() + " has no adapter_model.safetensors");
        SafetensorsFile::open(absolute / "adapter_model.safetensors");
    } else {
        Checkpoint::open(absolute);  // throws if it has no weights or a file is malformed
    }
    auto manifest = buildManifest(id, absolute, progress);
    writeManifest(record, manifest);
    log::info({id}, "imported {} ({} files, {} bytes)", absolute.string(), manifest.files.size(), manifest.totalBytes());
    return *entry;
}

}  // namespace dragoman
