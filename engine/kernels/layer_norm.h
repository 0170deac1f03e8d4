#pragma once
// out = LayerNorm(x + h) over rows of d floats (weight, bias of d): the residual add and the norm of a
// post-LN transformer layer in one pass, for decoding steps where each was a separate ATen call.
// Statistics are accumulated in double (libtorch accumulates in float: results agree to ~1e-7), in eight partial
// sums per row (value i in sum i mod 8, added in one fixed order at the end): eight independent chains where one
// took ~1 us per 384-value row, and the same bits from the AVX-512 lanes and the plain loops.
#include <cstdint>

namespace dragoman::kernels {

void addLayerNorm(const float* x, const float* h, const float* weight, const float* bias, float* out, std::int64_t rows, std::int64_t d,
                  double eps);

}  // namespace dragoman::kernels
