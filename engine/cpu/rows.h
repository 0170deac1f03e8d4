#pragma once
// Small pieces the CPU forward passes share: per-thread buffers grown on demand, a table's value as float32, ids
// checked against the vocabulary.
#include "cpu/matrix.h"
#include "kernels/bf16.h"
#include "util/error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace dragoman::cpu {

// The buffer with room for `count` floats (grown, never shrunk, so a thread's buffers settle at its largest call).
inline float* sized(std::vector<float>& buffer, std::int64_t count) {
    if (buffer.size() < static_cast<std::size_t>(count)) buffer.resize(static_cast<std::size_t>(count));
    return buffer.data();
}

// Element `index` of a table as float32: its code widened (an 8-bit table's scale is the caller's).
inline float widenedCode(const Matrix& table, std::int64_t index) {
    switch (table.type) {
        case Dtype::F32:
            return static_cast<const float*>(table.data)[index];
        case Dtype::BF16:
            return kernels::widen(static_cast<const std::uint16_t*>(table.data)[index]);
        case Dtype::I8:
            return kernels::widen(static_cast<const std::int8_t*>(table.data)[index]);
        case Dtype::FP8:
            return kernels::widen(kernels::Fp8E4M3{static_cast<const std::uint8_t*>(table.data)[index]});
    }
    return 0.0f;
}

// Elements [first, first + count) of a table as float32 (widenedCode's values), the type looked at once.
inline void widenedCodes(const Matrix& table, std::int64_t first, std::int64_t count, float* out) {
    const auto widenAll = [&](const auto* codes) {
        for (std::int64_t i = 0; i < count; ++i)
            out[i] = kernels::widen(codes[first + i]);
    };
    switch (table.type) {
        case Dtype::F32:
            return widenAll(static_cast<const float*>(table.data));
        case Dtype::BF16:
            return widenAll(static_cast<const std::uint16_t*>(table.data));
        case Dtype::I8:
            return widenAll(static_cast<const std::int8_t*>(table.data));
        case Dtype::FP8:
            for (std::int64_t i = 0; i < count; ++i)
                out[i] = widenedCode(table, first + i);
            return;
    }
}

// Throws Error("input") naming the first id outside [0, vocab).
inline void checkIds(const std::int64_t* ids, std::int64_t count, std::int64_t vocab) {
    for (std::int64_t i = 0; i < count; ++i)
        if (ids[i] < 0 || ids[i] >= vocab)
            throw Error("input", "token id " + std::to_string(ids[i]) + " lies outside the vocabulary of " + std::to_string(vocab));
}

}  // namespace dragoman::cpu
