#pragma once
// y = x W^T for a prompt (many activation rows) with bfloat16 (or 8-bit) weights W [N, K] as mapped and float32
// activations: a register-blocked GEMM in the BLIS style. The activations are packed once into panels of 6 rows
// (8 on AVX-512); each panel of 16 weight rows (32 on AVX-512) is widened and transposed into a small float32 buffer
// that stays in cache while every row panel passes over it, and a micro-kernel keeps its accumulators in registers
// (12 FMAs per 8 loads on AVX2, 16 per 10 on AVX-512, where the dot-product tiles of bf16_matmul.h run short of cache
// bandwidth). Both blockings sum each output in the same order, so they give the same numbers. Nothing is kept: the
// checkpoint stays as mapped. Callers check hasAvx2().
#include <cstdint>

namespace dragoman::kernels {

void bf16PackedMatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);
// The same for weight-only quantized weights (int8, float8 E4M3 codes): raw products, before the scale.
void i8PackedMatmulTransposed(const float* x, const std::int8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);
void fp8PackedMatmulTransposed(const float* x, const std::uint8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);

}  // namespace dragoman::kernels
