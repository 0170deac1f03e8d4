#include "kernels/rms_norm.h"

#include "kernels/bf16.h"

#include <cmath>

namespace dragoman::kernels {
namespace {

template <typename W>
void rmsNormRows(const float* x, const W* weight, float* out, std::int64_t rows, std::int64_t d, double eps) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * d;
        float* o = out + r * d;
        double squares = 0;
        for (std::int64_t i = 0; i < d; ++i)
            squares += static_cast<double>(xr[i]) * xr[i];
        const auto scale = static_cast<float>(1.0 / std::sqrt(squares / static_cast<double>(d) + eps));
        for (std::int64_t i = 0; i < d; ++i)
            o[i] = widen(weight[i]) * (xr[i] * scale);  // out may alias x
    }
}

}  // namespace

void rmsNorm(const float* x, const float* weight, float* out, std::int64_t rows, std::int64_t d, double eps) {
    rmsNormRows(x, weight, out, rows, d, eps);
}

void rmsNorm(const float* x, const std::uint16_t* bf16Weight, float* out, std::int64_t rows, std::int64_t d, double eps) {
    rmsNormRows(x, bf16Weight, out, rows, d, eps);
}

}  // namespace dragoman::kernels
