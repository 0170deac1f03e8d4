#include "kernels/silu_mul.h"

#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <cmath>

namespace dragoman::kernels {
namespace {

// Values per claim when a long prompt's rows are shared out: ~1/8 ms of work each.
constexpr std::int64_t kGrain = std::int64_t{1} << 16;

float silu(float g) {
    return g / (1.0f + std::exp(-g));
}

DRAGOMAN_AVX512 void siluMulAvx512(const float* gate, const float* up, float* out, std::int64_t count) {
    const __m512 one = _mm512_set1_ps(1.0f);
    for (std::int64_t i = 0; i < count; i += 16) {
        const __mmask16 lanes = firstLanes16(count - i);
        const __m512 g = _mm512_maskz_loadu_ps(lanes, gate + i);
        const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
        const __m512 s = _mm512_div_ps(g, _mm512_add_ps(one, e));
        _mm512_mask_storeu_ps(out + i, lanes, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(lanes, up + i)));
    }
}

DRAGOMAN_AVX512 void siluAvx512(const float* x, float* out, std::int64_t count) {
    const __m512 one = _mm512_set1_ps(1.0f);
    for (std::int64_t i = 0; i < count; i += 16) {
        const __mmask16 lanes = firstLanes16(count - i);
        const __m512 g = _mm512_maskz_loadu_ps(lanes, x + i);
        const __m512 e = exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
        _mm512_mask_storeu_ps(out + i, lanes, _mm512_div_ps(g, _mm512_add_ps(one, e)));
    }
}

void siluPart(const float* x, float* out, std::int64_t count) {
    if (hasAvx512()) return siluAvx512(x, out, count);
    for (std::int64_t i = 0; i < count; ++i)
        out[i] = silu(x[i]);
}

void geluPart(const float* x, float* out, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) {
        const double v = x[i];
        out[i] = static_cast<float>(0.5 * v * (1.0 + std::erf(v * 0.70710678118654752440)));
    }
}

// f over count values, long buffers shared out to the kernel threads.
template <typename Part>
void elementwise(const float* x, float* out, std::int64_t count, Part part) {
    if (count <= kGrain) return part(x, out, count);
    ThreadPool::shared().parallelFor(count, kGrain,
                                     [&](std::int64_t begin, std::int64_t end) { part(x + begin, out + begin, end - begin); });
}

void siluMulPart(const float* gate, const float* up, float* out, std::int64_t count) {
    if (hasAvx512()) return siluMulAvx512(gate, up, out, count);
    for (std::int64_t i = 0; i < count; ++i)
        out[i] = silu(gate[i]) * up[i];
}

}  // namespace

void silu(const float* x, float* out, std::int64_t count) {
    elementwise(x, out, count, siluPart);
}

void gelu(const float* x, float* out, std::int64_t count) {
    elementwise(x, out, count, geluPart);
}

void siluMul(const float* gate, const float* up, float* out, std::int64_t count) {
    if (count <= kGrain) return siluMulPart(gate, up, out, count);
    ThreadPool::shared().parallelFor(
        count, kGrain, [&](std::int64_t begin, std::int64_t end) { siluMulPart(gate + begin, up + begin, out + begin, end - begin); });
}

}  // namespace dragoman::kernels
