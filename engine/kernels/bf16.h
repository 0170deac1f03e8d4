#pragma once
// A bfloat16 value is the top half of a float32: widening is exact and costs one shift. The other overloads
// let kernels templated on the weight type read every weight dtype. Narrowing rounds to nearest, ties to even, as
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

// Weight-only quantized elements (layers/linear.h applies the scale after the dot product): an int8 value and
// a float8 E4M3 (fn) code are both exact in float32.
inline float widen(std::int8_t v) {
    return static_cast<float>(v);
}

struct Fp8E4M3 {
    std::uint8_t bits;
};

// E4M3 -> float32: the code's 7 low bits shifted into a float16 (exponent bias 15 instead of 7) times 2^8,
// which also covers the subnormals; 0x7F / 0xFF (NaN) read as 480, a value no quantizer writes.
inline float widen(Fp8E4M3 v) {
    const int exponent = (v.bits >> 3) & 15, mantissa = v.bits & 7;
    const float magnitude =
        exponent == 0 ? std::ldexp(static_cast<float>(mantissa), -9) : std::ldexp(static_cast<float>(8 + mantissa), exponent - 10);
    return (v.bits & 0x80) ? -magnitude : magnitude;
}

inline std::uint16_t narrowToBf16(float f) {
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    if (std::isnan(f)) return static_cast<std::uint16_t>((bits >> 16) | 0x40);  // stays a (quiet) NaN
    bits += 0x7FFF + ((bits >> 16) & 1);
    return static_cast<std::uint16_t>(bits >> 16);
}

}  // namespace dragoman::kernels
