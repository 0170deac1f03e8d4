#pragma once
// What quantizeModel (quantize/quantize_model.h) is asked for and what it did; no libtorch here.
#include <cstddef>
#include <cstdint>

namespace dragoman {

struct QuantizeSettings {
    enum class Type { Int8, Fp8 } type = Type::Int8;
    bool perChannel = true;  // false: one scale per tensor
    // The embedding and output tables too: a tied output layer is read once per token, a quarter of a 1.8B
    // HY-MT's bf16 bytes (RunnableModel::vocabularyTables()).
    bool tables = true;
    // W8A8: the config declares int8 activations quantized per token (int8 weights only).
    bool int8Activations = false;
};

struct QuantizeSummary {
    std::size_t quantized = 0;  // weights written in 8 bits
    std::uint64_t bytesBefore = 0, bytesAfter = 0;
};

}  // namespace dragoman
