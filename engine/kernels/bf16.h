#pragma once
// A bfloat16 value is the top half of a float32: widening is exact and costs one shift. The float overload
// lets kernels templated on the weight type read either dtype.
#include <cstdint>
#include <cstring>

namespace dragoman::kernels {

inline float widen(std::uint16_t v) {
    const std::uint32_t bits = static_cast<std::uint32_t>(v) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

inline float widen(float v) {
    return v;
}

}  // namespace dragoman::kernels
