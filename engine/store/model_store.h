#pragma once
// Where models live: our own cache (imported models and folders placed in it), an existing Hugging Face hub
// cache (read-only: models--ORG--NAME/snapshots/REV/ linking into blobs/), and the bundled default model.
// Manifests are always written under our cache, never into a folder we do not own.
#include "store/manifest.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dragoman {

enum class ModelSource { Bundled, Cache, Imported, HubCache, Path };
std::string_view sourceName(ModelSource source);

struct ModelEntry {
    std::string id;  // "org/name" for the hub, the folder name or --id otherwise
    std::filesystem::path dir;
    ModelSource source = ModelSource::Path;
    std::string revision;      // hub snapshot, if any
    std::string architecture;  // config.json "architectures"[0], or "" if unreadable
    std::string modelType;     // config.json "model_type"; "peft_lora" for a LoRA adapter folder
    std::uint64_t weightBytes = 0;
    std::string base;          // an adapter's base_model_name_or_path
    std::string quantization;  // "int8", "fp8" (weight-only 8-bit), "w8a8", another method's name, or "" (none)
};

struct StoreRoots {
    std::filesystem::path cache;                 // ours, writable
    std::filesystem::path hub;                   // Hugging Face hub cache, read-only
    std::vector<std::filesystem::path> bundled;  // folders that each hold bundled model folders
    static StoreRoots fromEnvironment();
};

class ModelStore {
public:
    explicit ModelStore(StoreRoots roots = StoreRoots::fromEnvironment());

    const StoreRoots& roots() const noexcept { return roots_; }
    std::vector<ModelEntry> list() const;

    // A model id known to the store, or a folder in Hugging Face layout. Throws Error("model_not_found").
    ModelEntry resolve(const std::string& idOrPath) const;
    // The default model: the first bundled one. Throws Error("model_not_found") with advice if none.
    ModelEntry defaultModel() const;

    // Registers a folder in place (no copy): hashes its files once and records them. Returns the entry.
    ModelEntry importModel(const std::filesystem::path& dir, std::string id, const HashProgress& progress = {}) const;

    // Forgets an imported model: its record goes, its folder stays untouched. Throws Error("input") for a model
    // that was not imported (bundled, in our cache or the hub cache, a path): Dragoman does not delete those.
    void forget(const ModelEntry& entry) const;

    std::filesystem::path manifestPath(const ModelEntry& entry) const;
    // The manifest of an entry, creating it (hashing once) on first sight.
    Manifest ensureManifest(const ModelEntry& entry, const HashProgress& progress = {}) const;
    // ensureManifest(), then the cheap check of a load: every file's size and mtime as recorded. Throws
    // Error("integrity") naming each changed or missing file and how to re-check.
    Manifest ensureUnchanged(const ModelEntry& entry, const HashProgress& progress = {}) const;

private:
    std::vector<ModelEntry> scanFolder(const std::filesystem::path& root, ModelSource source) const;
    std::vector<ModelEntry> scanImported() const;
    std::vector<ModelEntry> scanHub() const;

    StoreRoots roots_;
};

// Reads config.json of a folder into an entry (architecture, model type, weight bytes); nullopt if the folder
// is not a model.
std::optional<ModelEntry> describeModelFolder(const std::filesystem::path& dir, std::string id, ModelSource source);

}  // namespace dragoman
