#include "quantize/e4m3.h"

#include <algorithm>
#include <cmath>

namespace dragoman {
namespace {

// floor(log2(x)) for x > 0, exactly (log2 may round a value just below a power of two up to it).
int floorLog2(double x) {
    int exponent = 0;
    std::frexp(x, &exponent);  // x = f * 2^exponent, f in [0.5, 1)
    return exponent - 1;
}

}  // namespace

std::uint8_t encodeE4M3(double value) {
    const double magnitude = std::min(std::fabs(value), 448.0);
    if (!(magnitude > 0)) return 0;  // zero (either sign) and NaN
    // The spacing of E4M3 values around `magnitude`: 2^-9 below 2^-6 (subnormals), else 2^(exponent - 3).
    const int exponent = std::max(floorLog2(magnitude), -6);
    const double spacing = std::ldexp(1.0, exponent - 3);
    const double steps = std::nearbyint(magnitude / spacing);  // the default rounding mode: half to even
    const double rounded = steps * spacing;
    std::uint8_t code;
    if (rounded < std::ldexp(1.0, -6)) {
        code = static_cast<std::uint8_t>(steps);  // subnormal: mantissa = value / 2^-9 (8 is the first normal code)
    } else {
        const int e = floorLog2(rounded);
        const int mantissa = static_cast<int>(std::ldexp(rounded, 3 - e)) - 8;
        code = static_cast<std::uint8_t>(((e + 7) << 3) | mantissa);
    }
    if (code == 0) return 0;  // a negative value that rounds to zero is +0, as quant.py writes it
    return std::signbit(value) ? static_cast<std::uint8_t>(code | 0x80) : code;
}

}  // namespace dragoman
