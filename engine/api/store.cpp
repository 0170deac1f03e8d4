// dragoman.h's model store functions over store/model_store.h.
#include "dragoman.h"

#include "store/manifest.h"
#include "store/model_store.h"
#include "util/text.h"

namespace dragoman {
namespace {

ModelListing listing(const ModelEntry& e) {
    return {e.id, e.dir, std::string(sourceName(e.source)), e.modelType, e.architecture, e.revision, e.weightBytes, e.base, e.quantization};
}

// A one-phase meter's reports as the store's (bytes done, bytes total) callback.
HashProgress hashProgress(const ProgressCallback& callback, ProgressMeter& meter) {
    if (!callback) return {};
    return [&meter](std::uint64_t done, std::uint64_t total) { return meter.keepGoing(0, done, total); };
}

}  // namespace

std::vector<ModelListing> listModels() {
    std::vector<ModelListing> out;
    for (const auto& e : ModelStore().list())
        out.push_back(listing(e));
    return out;
}

StoreLocations storeLocations() {
    const ModelStore store;
    return {store.roots().cache, store.roots().hub};
}

std::optional<std::string> findDefaultModel() {
    try {
        return ModelStore().defaultModel().id;
    } catch (const Error&) {
        return std::nullopt;
    }
}

ModelListing findModel(const std::string& idOrPath) {
    return listing(ModelStore().resolve(idOrPath));
}

std::filesystem::path findAdapter(const std::string& idOrPath) {
    const ModelStore store;
    ModelEntry entry;
    try {
        entry = store.resolve(idOrPath);
    } catch (const Error&) {
        throw Error("adapter", "no adapter '" + idOrPath + "' (an adapter folder, or the id of an imported one)");
    }
    if (entry.modelType != "peft_lora")
        throw Error("adapter", idOrPath + " is not a LoRA adapter (no adapter_config.json): it is a " +
                                   (entry.modelType.empty() ? std::string("model") : entry.modelType + " model"));
    // Hashed once at import or first sight, like a model; afterwards sizes and times only.
    store.ensureUnchanged(entry);
    return entry.dir;
}

ModelListing importModel(const std::filesystem::path& dir, const std::string& id, const ProgressCallback& progress) {
    ProgressMeter meter(progress, {}, {{"Hashing files", 1}});
    return listing(ModelStore().importModel(dir, id, hashProgress(progress, meter)));
}

ModelListing forgetModel(const std::string& id) {
    const ModelStore store;
    const auto entry = store.resolve(id);
    store.forget(entry);
    return listing(entry);
}

std::string VerifyReport::describeProblems() const {
    return id + ": " + joinProblems(problems);
}

VerifyReport verifyModel(const std::string& idOrPath, bool full, const ProgressCallback& progress) {
    const ModelStore store;
    const auto entry = store.resolve(idOrPath);
    ProgressMeter meter(progress, {}, {{full ? "Re-hashing files" : "Checking files", 1}});
    auto manifest = store.ensureManifest(entry, hashProgress(progress, meter));
    VerifyReport report{entry.id, manifest.files.size(), manifest.totalBytes(), {}};
    const auto stale = statMismatches(manifest);
    report.problems = full ? hashMismatches(manifest, hashProgress(progress, meter)) : stale;
    // Contents intact after a full re-hash: files rewritten with the same bytes load again.
    if (full && report.problems.empty() && !stale.empty()) {
        recordCurrentTimes(manifest);
        writeManifest(store.manifestPath(entry), manifest);
        report.rerecorded = true;
    }
    return report;
}

}  // namespace dragoman
