#pragma once
// Loads a model the fast way: resolve it in the store, check its manifest with stat only, map its
// safetensors files and page the weights in with real byte progress. No libtorch: the network binds the mapped
// tensors it reads (runtime/architectures.h), zero-copy.
#include "io/checkpoint.h"
#include "load/load_progress.h"
#include "store/model_store.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <map>
#include <string>

namespace dragoman {

struct LoadOptions {
    ProgressCallback progress;           // may be empty; phases as in load/load_progress.h
    CancelToken cancel;                  // stops the load within about 100 ms (Cancelled)
    bool pageIn = true;                  // touch every weight page before returning
    std::uint64_t memoryLimitBytes = 0;  // 0: what /proc/meminfo says is available
    // Called once the entry is verified and its config.json read, before the weights are mapped and paged in: work
    // that needs only the folder's small files (openModel's tokenizer) can start beside the page-in. What it throws,
    // the load throws.
    std::function<void(const ModelEntry& entry, const nlohmann::json& config)> onConfig;
};

struct LoadStats {
    double resolveSeconds = 0, verifySeconds = 0, mapSeconds = 0, pageInSeconds = 0;
    double buildSeconds = 0;                    // binding the tensors and building the network (openModel)
    double readySeconds = 0;                    // from the start of the load until the model can run
    std::uint64_t bytes = 0;                    // weight file bytes
    std::uint64_t copies = 0, copiedBytes = 0;  // tensors the network could not use as mapped (openModel)
    bool hashedOnLoad = false;                  // first sight: the manifest was created during this load
};

struct LoadedModel {
    ModelEntry entry;
    nlohmann::json config;
    Checkpoint checkpoint;
    LoadStats stats;
};

// Throws Error (model_not_found, integrity, memory, checkpoint, the safetensors categories, ...) or Cancelled.
// `meter` (optional) continues an operation that goes on after the load (openModel: network, tokenizer);
// without one, the load reports through options.progress alone.
LoadedModel loadModel(const ModelStore& store, const std::string& idOrPath, const LoadOptions& options = {},
                      ProgressMeter* meter = nullptr);

}  // namespace dragoman
