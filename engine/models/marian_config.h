#pragma once
// config.json of a MarianMTModel, read and checked: what the architecture supports, and nothing it does not.
#include "layers/parameter_layout.h"
#include "text/tokenizer.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>

namespace dragoman {

struct MarianConfig {
    std::int64_t dModel = 0, encoderLayers = 0, decoderLayers = 0, encoderHeads = 0, decoderHeads = 0;
    std::int64_t encoderFfn = 0, decoderFfn = 0, vocabSize = 0, maxPositions = 0;
    TokenId decoderStart = 0, eos = 0, pad = 0;
    bool scaleEmbedding = true;
    std::string activation;
    // int8 weights with activations quantized per token (quantization_config's W8A8; models/quantization_config.h).
    bool int8Activations = false;

    static MarianConfig parse(const nlohmann::json& json, const std::string& label);
    // Every tensor a checkpoint of this shape stores, in the order MarianModel's constructor binds them (it is
    // run against a recording WeightBinder); tools/train starts from it.
    ParameterLayout parameterShapes() const;
};

}  // namespace dragoman
