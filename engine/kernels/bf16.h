#pragma once
// A bfloat16 value is the top half of a float32: widening is exact and costs one shift. The float overload
// lets kernels templated on the weight type read either dtype. Narrowing rounds to nearest, ties to even, as
// torch's .to(bfloat16) does.
#include <cmath>
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

inline std::uint16_t narrowToBf16(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    if (std::isnan(f)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // stays a (quiet) NaN
    bits += 0x7FFF + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>(bits >> 16);
}

}  // namespace dragoman::kernels
