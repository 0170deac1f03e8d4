#pragma once
// y = x W^T for a prompt through oneDNN, on CPUs whose oneDNN has native bfloat16 dot products (AVX512-BF16,
// AMX): with AMX on 2 cores, 1.2-1.8 TFLOP/s on a long prompt's projections (oneDNN's per-call times), where the
// engine's own AVX2 kernel (packed_gemm.h) reaches 100-180 GFLOP/s.
//
// The checkpoint stays as mapped (W [N, K] bf16, read in place) and the results are float32 products: each
// float32 activation is split into three bfloat16 terms, hi = bf16(x), mid = bf16(x - hi) and
// lo = bf16(x - hi - mid), whose sum is x exactly (8 + 8 + 8 bits of its 24-bit mantissa; only values near
// the float32 underflow lose bits). One product over the stacked rows [hi; mid; lo] accumulates in float32
// and the three parts are added. Two terms (16 bits) left errors of ~2^-17 |x| |W|, which moved the tiny
// reference HunYuan's logits by 1.1e-4 on AMX, past the 1e-4 its fixture allows; plain bf16 activations give the
// 5e-2 logit errors of bf16 inference. Three times the arithmetic, still faster than the AVX2 kernel.
#include "kernels/bf16_matmul.h"

#include <cstdint>
#include <string>

namespace dragoman::kernels {

// True when oneDNN reports AMX (or AVX512-BF16, with $DRAGOMAN_ONEDNN=1), $DRAGOMAN_ONEDNN is not 0, and a
// product on random data matched the float64 result at the first call (checked once per process; otherwise a
// warning is logged).
bool onednnBf16Ready();

// What bf16 models' prompt products run on, for logs and benchmarks: "onednn <impl> (<isa>)", "avx512-bf16 dot tiles
// (bf16 activations)" (bf16_dot_gemm.h), "avx512 packed" or "avx2 packed" (packed_gemm.h).
std::string promptKernelName();

// y [M, N] = x [M, K] W^T for bf16 W [N, K] (split activations, above). False when oneDNN has no optimised
// implementation for the shape (its slow reference code is never used): the caller computes y with its own kernel.
bool onednnBf16MatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);

// The same for 8-bit weights W [N, K] (int8 or float8 E4M3 codes, WeightType::I8 or FP8), whose values are exact
// in bf16: widened panel by panel (about 1 MiB at a time, never the whole matrix) and multiplied there; y gets the
// raw products, before the layer's scale. False as above.
bool onednnEightBitMatmulTransposed(const float* x, const void* w, WeightType type, float* y, std::int64_t m, std::int64_t n,
                                    std::int64_t k);

// The same call path with float32 W, which oneDNN implements on every x86 CPU: the tests check the layout,
// shapes and primitive cache with it on machines without bf16 dot products.
bool onednnF32MatmulTransposed(const float* x, const float* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);

// hi[i] = bf16(x[i]), mid[i] = bf16(x[i] - hi[i]) and lo[i] = bf16(x[i] - hi[i] - mid[i]), each rounded to
// nearest even.
void splitToBf16(const float* x, std::uint16_t* hi, std::uint16_t* mid, std::uint16_t* lo, std::int64_t count);

}  // namespace dragoman::kernels
