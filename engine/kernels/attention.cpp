#include "kernels/attention.h"

#include "kernels/simd.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <vector>

namespace dragoman::kernels {
namespace {

float dotPortable(const float* a, const float* b, std::int64_t n) {
    float sum = 0;
    for (std::int64_t i = 0; i < n; ++i)
        sum += a[i] * b[i];
    return sum;
}

__attribute__((target("avx2,fma,f16c"))) float dotAvx2(const float* a, const float* b, std::int64_t n) {
    __m256 s0 = _mm256_setzero_ps(), s1 = s0;
    std::int64_t i = 0;
    for (; i + 15 < n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    for (; i + 7 < n; i += 8)
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    float sum = sum8(_mm256_add_ps(s0, s1));
    for (; i < n; ++i)
        sum += a[i] * b[i];
    return sum;
}

// out += w * v over n floats.
__attribute__((target("avx2,fma,f16c"))) void axpyAvx2(float w, const float* v, float* out, std::int64_t n) {
    const __m256 wv = _mm256_set1_ps(w);
    std::int64_t i = 0;
    for (; i + 7 < n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_fmadd_ps(wv, _mm256_loadu_ps(v + i), _mm256_loadu_ps(out + i)));
    for (; i < n; ++i)
        out[i] += w * v[i];
}

void axpyPortable(float w, const float* v, float* out, std::int64_t n) {
    for (std::int64_t i = 0; i < n; ++i)
        out[i] += w * v[i];
}

}  // namespace

void attendOneQuery(const float* q, const KvLayout& keys, const KvLayout& values, float* out, std::int64_t batch, std::int64_t heads,
                    std::int64_t group, std::int64_t length, std::int64_t headDim, float scale) {
    const auto dot = hasAvx2() ? dotAvx2 : dotPortable;
    const auto axpy = hasAvx2() ? axpyAvx2 : axpyPortable;
    auto one = [&](std::int64_t index, std::vector<float>& weights) {
        const std::int64_t b = index / heads, h = index % heads, kvHead = h / group;
        const float* query = q + index * headDim;
        const float* k = keys.data + b * keys.batchStride + kvHead * keys.headStride;
        const float* v = values.data + b * values.batchStride + kvHead * values.headStride;
        weights.resize(static_cast<std::size_t>(length));
        float maximum = -INFINITY;
        for (std::int64_t t = 0; t < length; ++t) {
            weights[t] = dot(query, k + t * keys.rowStride, headDim) * scale;
            maximum = std::max(maximum, weights[t]);
        }
        float sum = 0;
        for (std::int64_t t = 0; t < length; ++t)
            sum += (weights[t] = std::exp(weights[t] - maximum));
        float* o = out + index * headDim;
        std::fill(o, o + headDim, 0.0f);
        const float inverse = 1.0f / sum;
        for (std::int64_t t = 0; t < length; ++t)
            axpy(weights[t] * inverse, v + t * values.rowStride, o, headDim);
    };
    const std::int64_t count = batch * heads;
    // A decoding step's attention is a few hundred thousand multiply-adds: handing it to the pool costs
    // more than it saves until the cache is long.
    if (count * length * headDim < (1 << 18)) {
        std::vector<float> weights;
        for (std::int64_t i = 0; i < count; ++i)
            one(i, weights);
        return;
    }
    ThreadPool::shared().parallelFor(count, 1, [&](std::int64_t begin, std::int64_t end) {
        std::vector<float> weights;
        for (std::int64_t i = begin; i < end; ++i)
            one(i, weights);
    });
}

}  // namespace dragoman::kernels
