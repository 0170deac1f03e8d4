#pragma once
// out = LayerNorm(x + h) over rows of d floats (weight, bias of d): the residual add and the norm of a
// post-LN transformer layer in one pass, for decoding steps where each was a separate ATen call.
// Statistics are accumulated in double (libtorch accumulates in float: results agree to ~1e-7).
#include <cstdint>

namespace dragoman::kernels {

void addLayerNorm(const float* x, const float* h, const float* weight, const float* bias, float* out, std::int64_t rows, std::int64_t d,
                  double eps);

}  // namespace dragoman::kernels
