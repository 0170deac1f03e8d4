#pragma once
// Decoding steps of 8-bit weights (weight-only quantized int8 or float8 E4M3 codes, as mapped) for a model that
// computes in bf16 (Placement::bf16Activations, a copy quantized from a bf16 original) on CPUs with AVX512-BF16 and
// AVX512-VBMI.
//
// Why: a decoding step reads every weight once, and at these machines' faster minutes (80+ GB/s) the float32 path
// (each code widened to float32, then a multiply-add per 16: three to five instructions per 16 codes) could not keep
// up with memory: FP8 streamed at 50 GB/s and int8 at 54 where bf16 weights on the vdpbf16ps tiles reached 58. Here
// 64 codes become 64 exact bf16 values in five to seven instructions (VBMI byte-table lookups for the two bytes of
// each magnitude's bf16 value, the sign put back, two interleaves) and meet the activations in two vdpbf16ps.
//
// Where it is used (layers/linear.cpp): int8 and FP8 steps. Through the 1.8B's matrices (one row, 2 threads, Zen 5,
// alternating in one process) these tiles stream synthetic int8 and FP8 codes at 45-49 GB/s, where the float32 path
// read them at 35-37 and 32-34 and bf16 weights stream at 55-60 on the bf16 tiles. The synthetic checkpoints' own
// codes, in file order: int8 46-47 GB/s, FP8 37-41 (the same whether mapped from the file or copied; why FP8's real
// codes read slower than random ones is not known). Decoding the int8 1.8B: 17.7-19.7 -> 19.5-22.0 tokens/s.
//
// Semantics: a bf16 model's, as its prompts (bf16_dot_gemm.h): each activation row rounded once to bf16 (nearest
// even), int8 and E4M3 values exact in bf16, every product and sum float32. The raw products, before the layer's scale.
// Each output is summed in one fixed order over K whatever M, N, the tile shape or the split over threads: a
// sequence decoded alone gets the numbers it gets in a batched step, and many() gives each output what the
// single-matrix call gives it.
#include "kernels/bf16_matmul.h"

#include <cstddef>
#include <cstdint>

namespace dragoman::kernels {

// True when 8-bit decoding steps of bf16 models take this kernel: bf16DotProducts() and AVX512-VBMI.
bool eightBitDotSteps();

// y [M, N] = bf16(x) [M, K] times values(W) [N, K]^T for codes W as mapped (`type` I8 or FP8).
void eightBitDotStepsMatmulTransposed(const float* x, const void* w, WeightType type, float* y, std::int64_t m, std::int64_t n,
                                      std::int64_t k);

// One activation row against several 8-bit matrices sharing K (each output's type I8 or FP8), in one pass over the
// thread pool; each output gets exactly what eightBitDotStepsMatmulTransposed gives it.
void eightBitDotStepsGemvMany(const float* x, const GemvOutput* outputs, std::size_t count, std::int64_t k);

}  // namespace dragoman::kernels
