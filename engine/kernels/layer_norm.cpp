#include "kernels/layer_norm.h"

#include <cmath>

namespace dragoman::kernels {

void addLayerNorm(const float* x, const float* h, const float* weight, const float* bias, float* out, std::int64_t rows, std::int64_t d,
                  double eps) {
    for (std::int64_t r = 0; r < rows; ++r) {
        const float* xr = x + r * d;
        const float* hr = h + r * d;
        float* o = out + r * d;
        double sum = 0;
        for (std::int64_t i = 0; i < d; ++i)
            sum += (o[i] = xr[i] + hr[i]);  // out may alias x or h
        const double mean = sum / static_cast<double>(d);
        double squares = 0;
        for (std::int64_t i = 0; i < d; ++i)
            squares += (o[i] - mean) * (o[i] - mean);
        const double rstd = 1.0 / std::sqrt(squares / static_cast<double>(d) + eps);
        for (std::int64_t i = 0; i < d; ++i)
            o[i] = static_cast<float>((o[i] - mean) * rstd) * weight[i] + bias[i];
    }
}

}  // namespace dragoman::kernels
