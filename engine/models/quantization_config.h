#pragma once
// config.json's quantization_config, checked before a quantized checkpoint is built. The engine computes with
// weight-only 8-bit weights: the compressed-tensors layout (what llm-compressor, vLLM and Tencent's FP8 releases
// write: `int-quantized` I8 or `float-quantized` F8_E4M3 weights, a `weight_scale` per output channel [out, 1]
// or per tensor [1], for Linear layers and, in the same layout, Embedding tables) and the plain "fp8" method's per-tensor E4M3 weights.
// Everything else (GPTQ, AWQ, bitsandbytes, 4-bit packing, zero points, group or block scales, E5M2) is refused by name here instead of
// loading into wrong numbers. Activations: int8 weights whose `input_activations` are 8-bit integers quantized
// dynamically per token (W8A8, kernels/int8_activation_gemm.h) are computed so; other activation schemes (static
// input scales, FP8 activations) keep float32 activations, which the dequantized model computes within their rounding.
#include "io/checkpoint.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dragoman {

struct QuantizationScheme {
    enum class Weights { None, Int8, Float8E4M3 };
    enum class Activations { Float, Int8PerToken };
    Weights weights = Weights::None;
    Activations activations = Activations::Float;
    std::vector<std::string> ignore;  // modules kept in floating point ("ignore" or "ignored_layers")
};

// Throws Error("unsupported") naming the first setting the engine does not implement; a config without
// quantization_config gives Weights::None. `label` names the file in messages.
QuantizationScheme checkQuantizationConfig(const nlohmann::json& config, const std::string& label);

// Every 8-bit weight of `checkpoint` agrees with `scheme` and has a floating-point weight_scale of shape
// [out, 1], [1] or []; no tensor of a type the scheme cannot read. Throws Error("checkpoint") or
// Error("unsupported") naming the tensor.
void checkQuantizedTensors(const QuantizationScheme& scheme, const Checkpoint& checkpoint, const std::string& label);

}  // namespace dragoman
