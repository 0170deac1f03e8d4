#pragma once
// Loads a PEFT LoRA adapter folder (adapter_config.json + adapter_model.safetensors) for one loaded model:
// the file is mapped and its tensors bound zero-copy (F32 and BF16 as stored; F16, which the kernels do not
// read, widened once to F32 and counted), then checked against the base: every module the config targets
// must be a Linear of the model and have both tensors, of shapes A [r, in] and B [out, r]; a tensor for a
// module the base lacks, or any other tensor, is refused. The base's weights are never read or changed.
#include "adapters/adapter_load_stats.h"
#include "layers/linear.h"
#include "layers/lora.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace dragoman {

// `linears`: the base model's Linear layers by slot (models' linears()). `modelType`: the base's, checked against
// the adapter's task. Throws Error("adapter") naming the file and the problem.
std::shared_ptr<const LoraSet> loadLoraAdapter(const std::filesystem::path& dir, const std::string& name,
                                               const std::vector<LinearModule>& linears, Placement placement,
                                               AdapterLoadStats* stats = nullptr);

// Whether a folder holds a PEFT adapter (adapter_config.json).
bool isAdapterFolder(const std::filesystem::path& dir);

}  // namespace dragoman
