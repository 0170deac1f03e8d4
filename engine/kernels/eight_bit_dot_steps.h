#pragma once
// Decoding steps of 8-bit weights (weight-only quantized int8 or float8 E4M3 codes, as mapped) for a model that
// computes in bf16 (Placement::bf16Activations, a copy quantized from a bf16 original) on CPUs with AVX512-BF16,
// AVX512-VBMI and AVX512-VNNI.
//
// Why: a decoding step reads every weight once, and at these machines' faster minutes (80+ GB/s) the float32 path
// (each code widened to float32, then a multiply-add per 16: three to five instructions per 16 codes) could not keep
// up with memory. FP8 codes: 64 become 64 exact bf16 values in five instructions (VBMI byte-table lookups for the two
// bytes of each magnitude's bf16 value, the sign put back, two interleaves) and meet the activations in two vdpbf16ps.
// int8 codes: int8_digit_steps.h (one xor and three vpdpbusd per 64 codes against the row's 24-bit digit planes).
//
// Where it is used (layers/linear.cpp): int8 and FP8 steps. Decoding the synthetic 1.8B (`tests/bench/quantized.sh`,
// 2 threads, Zen 5, three runs): int8 1.59-1.78x and FP8 1.70-1.92x bf16's tokens/s, where the float32 path gave
// about 1.2x.
//
// Semantics: FP8, a bf16 model's, as its prompts (bf16_dot_gemm.h): each activation row rounded once to bf16
// (nearest even), E4M3 values exact in bf16, every product and sum float32. int8: exact integer products of the codes
// and the row's 24-bit fixed point (int8_digit_steps.h), nearer the float32 products than bf16 rounding. The raw
// products, before the layer's scale. Each output is summed in one fixed order over K whatever M, N, the tile shape or
// the split over threads: a sequence decoded alone gets the numbers it gets in a batched step, and many() gives each
// output what the single-matrix call gives it.
#include "kernels/bf16_matmul.h"

#include <cstddef>
#include <cstdint>

namespace dragoman::kernels {

// True when 8-bit decoding steps of bf16 models take this kernel: bf16DotProducts(), AVX512-VBMI and int8DigitSteps().
bool eightBitDotSteps();

// y [M, N] = x [M, K] times values(W) [N, K]^T for codes W as mapped (`type` I8 or FP8), with the semantics above.
void eightBitDotStepsMatmulTransposed(const float* x, const void* w, WeightType type, float* y, std::int64_t m, std::int64_t n,
                                      std::int64_t k);

// One activation row against several 8-bit matrices sharing K (each output's type I8 or FP8), in one pass over the
// thread pool; each output gets exactly what eightBitDotStepsMatmulTransposed gives it.
void eightBitDotStepsGemvMany(const float* x, const GemvOutput* outputs, std::size_t count, std::int64_t k);

}  // namespace dragoman::kernels
