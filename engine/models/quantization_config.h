#pragma once
// config.json's quantization_config, checked before a quantized checkpoint is built: the engine computes with
// the compressed-tensors layout's symmetric 8-bit integer weights (I8 with a weight_scale per output channel or
// per tensor, see layers/linear.h); everything else (GPTQ, AWQ, bitsandbytes, 4-bit packing, zero points, group
// or block scales, FP8 for now) is refused by name here instead of loading into wrong numbers.
#include <nlohmann/json.hpp>

#include <string>

namespace dragoman {

// Throws Error("unsupported") naming the first setting the engine does not implement; a config without
// quantization_config passes. `label` names the file in messages.
void checkQuantizationConfig(const nlohmann::json& config, const std::string& label);

}  // namespace dragoman
