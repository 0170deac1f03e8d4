#pragma once
// Whether a compressed-tensors config group declares W8A8's activations: 8-bit integers, symmetric, quantized
// dynamically per token (kernels/int8_activation_gemm.h). One reading for the loader (models/quantization_config.h)
// and the model listing (store/model_store.h), so a copy is listed as what it is computed as.
#include <nlohmann/json.hpp>

namespace dragoman {

// `group`: one entry of quantization_config.config_groups. Fields of unexpected types make it false, never throw.
bool declaresInt8ActivationsPerToken(const nlohmann::json& group);

}  // namespace dragoman
