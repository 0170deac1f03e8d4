#pragma once
// config.json of a HunYuanDenseV1 model (HY-MT), read and checked, including its RoPE scaling variants.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace dragoman {

struct HunyuanConfig {
    std::int64_t hidden = 0, intermediate = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0, vocabSize = 0, maxPositions = 0;
    double ropeTheta = 10000.0, ropeAlpha = 1.0, rmsEps = 1e-5;
    bool qkNorm = true;
    // tie_word_embeddings as config.json states it; absent (transformers' default is false) the output layer
    // is lm_head.weight when the checkpoint stores one and the embeddings otherwise (HunyuanModel).
    std::optional<bool> tieWordEmbeddings;
    // torch_dtype (transformers 5: dtype) as config.json states it, empty when absent: what the model computes in.
    std::string dtype;
    // int8 weights with activations quantized per token (quantization_config's W8A8; models/quantization_config.h).
    bool int8Activations = false;

    static HunyuanConfig parse(const nlohmann::json& json, const std::string& label);
    double ropeBase() const;
    // Whether the model computes in bf16: as its dtype says, or where it says nothing, as its embeddings are stored.
    bool computesInBf16(bool embeddingsStoredBf16) const { return dtype.empty() ? embeddingsStoredBf16 : dtype == "bfloat16"; }
};

}  // namespace dragoman
