#pragma once
// y = x W^T for a prompt through oneDNN, on CPUs whose oneDNN has native bfloat16 dot products (AVX512-BF16,
// AMX): about 600-900 GFLOP/s there, where the engine's own AVX2 kernel (packed_gemm.h) reaches 100-180.
//
// The checkpoint stays as mapped (W [N, K] bf16, read transposed in place) and the results match the float32
// reference: each float32 activation is split into two bfloat16 terms, hi = bf16(x) and lo = bf16(x - hi),
// which together carry 16 bits of its mantissa; one product over the stacked rows [hi; lo] accumulates in
// float32 and the two halves are added. Exact bf16 weights times hi + lo differ from the float32 product by
// about 2^-17 of |x| |W|, against 2^-9 for plain bf16 activations (the 5e-2 logit errors of bf16 inference).
// Twice the arithmetic, still 3-5x the AVX2 kernel.
#include <cstdint>
#include <string>

namespace dragoman::kernels {

// True when oneDNN reports AVX512-BF16 or AMX, $DRAGOMAN_ONEDNN is not 0, and a product on random data
// matched the float64 result at the first call (checked once per process; otherwise a warning is logged).
bool onednnBf16Ready();

// What prompts' bf16 products run on, for logs and benchmarks: "onednn <impl> (<isa>)" or "avx2 packed".
std::string promptKernelName();

// y [M, N] = x [M, K] W^T for bf16 W [N, K] (split activations, above). False when oneDNN has no optimised
// implementation for the shape (its slow reference code is never used): the caller computes y with its own kernel.
bool onednnBf16MatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);

// The same call path with float32 W, which oneDNN implements on every x86 CPU: the tests check the layout,
// shapes and primitive cache with it on machines without bf16 dot products.
bool onednnF32MatmulTransposed(const float* x, const float* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);

// hi[i] = bf16(x[i]) and lo[i] = bf16(x[i] - widen(hi[i])), both rounded to nearest even.
void splitToBf16(const float* x, std::uint16_t* hi, std::uint16_t* lo, std::int64_t count);

}  // namespace dragoman::kernels
