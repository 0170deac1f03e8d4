#pragma once
// y = x W^T with float32 activations x [M, K] and bfloat16 weights W [N, K] used as mapped: each weight is
// widened to float32 in registers (exact: bf16 is the top half of a float32) and accumulated in float32.
// Decoding (M = 1) streams W once at memory speed; prompts (M > 1) reuse each cache-sized block of W for
// every row. AVX-512 for long weight rows where the CPU has it (avx512_matmul.h), AVX2/FMA otherwise, portable code
// without either; split over the kernel thread pool.
#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace dragoman::kernels {

void bf16MatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);
// The same kernels on float32 weights, for a few rows (decoding steps, beams): they stream W once for all rows,
// where OpenBLAS runs a 4-row GEMM at a fraction of the memory speed.
void f32MatmulTransposed(const float* x, const float* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);
// Weight-only quantized weights as mapped, int8 or float8 E4M3 codes, widened in registers (both exact in
// float32): the raw products, before the layer's per-channel scale. Summed in the same order as the other
// dtypes, so batched rows keep their numbers.
void i8MatmulTransposed(const float* x, const std::int8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);
void fp8MatmulTransposed(const float* x, const std::uint8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k);

// One activation row against several matrices sharing K, in a single pass over the thread pool (the q/k/v or
// gate/up projections of a decoding step): fewer hand-offs, and small matrices share the work. Each output
// gets exactly what the single-matrix kernels give it (8-bit weights: the raw products, before the scale).
enum class WeightType { BF16, I8, FP8 };
struct GemvOutput {
    const void* w;  // [n, k] of `type`
    WeightType type;
    float* y;
    std::int64_t n;
};
void gemvMany(const float* x, const GemvOutput* outputs, std::size_t count, std::int64_t k);

// The outputs' rows laid end to end: how many, and part(output, from, to) for each output's rows that a claim
// [begin, end) of them covers (the several-matrix kernels share their rows out over the pool this way).
std::int64_t rowsOfOutputs(const GemvOutput* outputs, std::size_t count);
template <typename Part>
void forRowsOfOutputs(const GemvOutput* outputs, std::size_t count, std::int64_t begin, std::int64_t end, Part&& part) {
    std::int64_t offset = 0;
    for (std::size_t i = 0; i < count && offset < end; ++i) {
        const auto& o = outputs[i];
        const auto from = std::max(begin, offset) - offset, to = std::min(end, offset + o.n) - offset;
        if (from < to) part(o, from, to);
        offset += o.n;
    }
}

// dst[i] = float(src[i]) for bfloat16 src, on the kernel thread pool.
void widenBf16(const std::uint16_t* src, float* dst, std::int64_t count);

}  // namespace dragoman::kernels
