#pragma once
// y = x W^T on CPUs with AVX512-BF16 dot products (vdpbf16ps) and no AMX, the CPU class where llama.cpp's bf16
// prompts ran 3x faster than the engine's float32 kernel and its decoding read bf16 weights faster (AMD Zen 4/5).
//
// Semantics: a bf16 model's (its config.json's torch_dtype; Placement::bf16Activations). Each activation row is
// rounded once to bfloat16 (nearest even), as the model runs in bf16 under transformers and llama.cpp; the bf16
// weights are read in place, and every product and sum is float32. The residual stream, norms and attention stay
// float32, so the result is closer to float32 than transformers' bf16 run. Float32 activations would need three bf16
// terms each (onednn_matmul.h), three times the arithmetic: slower than float32 FMAs on these CPUs. Prompts and
// decoding steps both come here: one vdpbf16ps takes 32 weights as loaded, where widening them to float32 cost
// three instructions per 16, and a decoding step read the weights at 0.7 of the memory bandwidth instead of 0.95.
// Float32 models, and 8-bit weights made from them (exact to their dequantized float32 twins), never come here;
// DRAGOMAN_BF16_ACTIVATIONS=0 keeps bf16 models float32 too.
//
// Each output is one dot product over K in a fixed order (sixteen float32 lanes, pairs of K per lane, then sum16),
// whatever M, N or the split over threads: a row's numbers do not depend on the other rows of the prompt, and a
// sequence decoded alone gets the numbers it gets in a batched step. Which lane a pair lands in follows where the
// weights start in a 64-byte line (they are read by whole lines; see leadingLanes), so the same weights at another
// address may differ in the last bits.

#include "kernels/bf16_matmul.h"

#include <cstddef>
#include <cstdint>

namespace dragoman::kernels {

// AVX512-BF16 (with F, BW and VL) reported by the CPU, and not turned off by DRAGOMAN_NO_AVX512.
bool hasAvx512Bf16();

// True when bf16 models' products take this kernel: hasAvx512Bf16(), oneDNN's AMX path is not in use
// (onednn_matmul.h, float32 activations) and DRAGOMAN_BF16_ACTIVATIONS is not 0.
bool bf16DotProducts();

// y [M, N] = bf16(x) [M, K] times W [N, K]^T for bf16 W as mapped.
void bf16DotMatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);

// The same for 8-bit weights W [N, K] as mapped (WeightType::I8 or FP8 codes, weight-only quantized): the raw products
// (the caller applies the scales) of bf16(x) and the codes' values, which bf16 holds exactly. For the prompts of an
// 8-bit model made from a bf16 one: the semantics of that model run in bf16, at the bf16 kernel's speed (each block
// of weight rows is widened once per sweep and shared by all its row tiles), where float32 activations ran on the
// float32 FMA kernel at half of it (40 rows) to three quarters (500). Decoding steps keep their float32-activation
// kernels (bf16_matmul.h), except where AVX512-VBMI widens the codes by byte tables (eight_bit_dot_steps.h).
void bf16DotEightBitMatmulTransposed(const float* x, const void* w, WeightType type, float* y, std::int64_t m, std::int64_t n,
                                     std::int64_t k);

// One activation row against several bf16 matrices sharing K (a decoding step's q/k/v or gate/up projections), in one
// pass over the thread pool: the row narrowed once, one hand-off, and the small matrices' rows shared out with the
// large ones'. Each output gets exactly what bf16DotMatmulTransposed gives it. Every output's type is BF16.
void bf16DotGemvMany(const float* x, const GemvOutput* outputs, std::size_t count, std::int64_t k);

}  // namespace dragoman::kernels
