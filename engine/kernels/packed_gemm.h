#pragma once
// y = x W^T for a prompt (many activation rows) with bfloat16 (or 8-bit) weights W [N, K] as mapped: a register-blocked
// GEMM in the BLIS style. The activations are packed once into 6-row panels; each 16-row panel of W is
// widened and transposed into a small float32 buffer that stays in L1 while every row panel passes over it,
// and a 6x16 micro-kernel keeps its 12 accumulators in registers (12 FMAs per 8 loads, where the dot-product
// tiles of bf16_matmul.h run short of cache bandwidth). Nothing is kept: the checkpoint stays bf16.
// AVX2/FMA only: callers check hasAvx2().
#include <cstdint>

namespace dragoman::kernels {

void bf16PackedMatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);
// The same for weight-only quantized weights (int8, float8 E4M3 codes): raw products, before the scale.
void i8PackedMatmulTransposed(const float* x, const std::int8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);
void fp8PackedMatmulTransposed(const float* x, const std::uint8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);

}  // namespace dragoman::kernels
