#include "kernels/rope.h"

namespace dragoman::kernels {

void applyRope(float* x, std::int64_t rows, std::int64_t d, const float* cos, const float* sin, std::int64_t positions) {
    const std::int64_t half = d / 2;
    for (std::int64_t r = 0; r < rows; ++r) {
        float* xr = x + r * d;
        const float* c = cos + (r % positions) * d;
        const float* s = sin + (r % positions) * d;
        for (std::int64_t i = 0; i < half; ++i) {
            const float first = xr[i], second = xr[i + half];
            xr[i] = first * c[i] - second * s[i];
            xr[i + half] = second * c[i + half] + first * s[i + half];
        }
    }
}

}  // namespace dragoman::kernels
