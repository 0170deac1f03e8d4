#pragma once
// out = weight * (x * rsqrt(mean(x^2) + eps)) over rows of d floats, as transformers' RMSNorm computes it in
// float32, with the weight as mapped (bf16 widened exactly, or float32). One pass per row instead of the
// six ATen calls (pow, mean, add, rsqrt, two muls) and a widened weight copy a decoding step made per norm.
// The mean of squares is accumulated in double: it agrees with libtorch's float32 reduction to ~1e-7.
#include <cstdint>

namespace dragoman::kernels {

void rmsNorm(const float* x, const float* weight, float* out, std::int64_t rows, std::int64_t d, double eps);
void rmsNorm(const float* x, const std::uint16_t* bf16Weight, float* out, std::int64_t rows, std::int64_t d, double eps);

}  // namespace dragoman::kernels
