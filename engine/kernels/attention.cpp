#include "kernels/attention.h"

#include "kernels/simd.h"
#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <utility>
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

namespace {

using Dot = float (*)(const float*, const float*, std::int64_t);
using Axpy = void (*)(float, const float*, float*, std::int64_t);

// The softmax's scalar middle, shared by both head kernels so that they give the same bits: weights[t] becomes
// exp(weights[t] - maximum); returns one over their sum.
float exponentiate(std::vector<float>& weights, std::int64_t length, float maximum) {
    float sum = 0;
    for (std::int64_t t = 0; t < length; ++t)
        sum += (weights[t] = std::exp(weights[t] - maximum));
    return 1.0f / sum;
}

// One query head over `length` cached rows: softmax(scale * q . k_t) summed over v_t into o.
void attendHead(const float* query, const float* k, std::int64_t kStride, const float* v, std::int64_t vStride, std::int64_t length,
                std::int64_t headDim, float scale, float* o, std::vector<float>& weights, Dot dot, Axpy axpy) {
    weights.resize(static_cast<std::size_t>(length));
    float maximum = -INFINITY;
    for (std::int64_t t = 0; t < length; ++t) {
        weights[t] = dot(query, k + t * kStride, headDim) * scale;
        maximum = std::max(maximum, weights[t]);
    }
    const float inverse = exponentiate(weights, length, maximum);
    std::fill(o, o + headDim, 0.0f);
    for (std::int64_t t = 0; t < length; ++t)
        axpy(weights[t] * inverse, v + t * vStride, o, headDim);
}

// Lane i: sum16(acc[i]) bit for bit (simd512.h's sixteenLaneTree, put back in order).
DRAGOMAN_AVX512 inline __m512 sixteenLaneSums(const __m512 (&acc)[16]) {
    const __m512 sums = sixteenLaneTree(acc, AddFloatLanes());
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    return _mm512_maskz_permutexvar_ps(kAll16, order, sums);
}

// attendHead for headDim = 16 x Chunks on AVX-512, the query and the output held in registers across the cached
// rows. Bit for bit attendHead with the AVX2 helpers: a 16-lane accumulator is dotAvx2's two 8-lane ones side by
// side (sum16 adds them, then sums eight as sum8 does), and each output value gets the same multiply-adds in the
// same order; the softmax is the same scalar code.
template <int Chunks>
DRAGOMAN_AVX512 void attendHeadAvx512(const float* query, const float* k, std::int64_t kStride, const float* v, std::int64_t vStride,
                                      std::int64_t length, float scale, float* o, std::vector<float>& weights) {
    weights.resize(static_cast<std::size_t>(length));
    // The values are read only after the scores and their softmax: asked for now, they arrive meanwhile (a step's
    // caches come from L3 or memory). The first rows only, that the L1 holds.
    for (std::int64_t t = 0; t < std::min<std::int64_t>(length, 64); ++t)
#pragma GCC unroll 8
        for (int c = 0; c < Chunks; ++c)
            _mm_prefetch(reinterpret_cast<const char*>(v + t * vStride + 16 * c), _MM_HINT_T0);
    __m512 q[Chunks];
#pragma GCC unroll 8
    for (int c = 0; c < Chunks; ++c)
        q[c] = _mm512_loadu_ps(query + 16 * c);
    float maximum = -INFINITY;
    std::int64_t t = 0;
    // Up to sixteen keys at a time: their accumulators summed across lanes together (sixteenLaneSums), in sum16's
    // order, a short run's spare lanes summing zeros. The last one or two keys take sum16 each (one tree costs about
    // what three sum16 calls do).
    const __m512 scales = _mm512_set1_ps(scale);
    for (std::int64_t run; (run = std::min<std::int64_t>(16, length - t)) >= 3; t += run) {
        __m512 acc[16];
#pragma GCC unroll 16
        for (int i = 0; i < 16; ++i) {
            acc[i] = _mm512_setzero_ps();
            if (i >= run) continue;
            const float* kt = k + (t + i) * kStride;
#pragma GCC unroll 8
            for (int c = 0; c < Chunks; ++c)
                acc[i] = _mm512_fmadd_ps(q[c], _mm512_loadu_ps(kt + 16 * c), acc[i]);
        }
        _mm512_mask_storeu_ps(weights.data() + t, firstLanes16(run), _mm512_mul_ps(sixteenLaneSums(acc), scales));
        for (std::int64_t i = 0; i < run; ++i)
            maximum = std::max(maximum, weights[t + i]);
    }
    for (; t < length; ++t) {
        const float* kt = k + t * kStride;
        __m512 acc = _mm512_setzero_ps();
#pragma GCC unroll 8
        for (int c = 0; c < Chunks; ++c)
            acc = _mm512_fmadd_ps(q[c], _mm512_loadu_ps(kt + 16 * c), acc);
        weights[t] = sum16(acc) * scale;
        maximum = std::max(maximum, weights[t]);
    }
    const float inverse = exponentiate(weights, length, maximum);
    __m512 out[Chunks];
#pragma GCC unroll 8
    for (int c = 0; c < Chunks; ++c)
        out[c] = _mm512_setzero_ps();
    for (std::int64_t t = 0; t < length; ++t) {
        const __m512 w = _mm512_set1_ps(weights[t] * inverse);
        const float* vt = v + t * vStride;
#pragma GCC unroll 8
        for (int c = 0; c < Chunks; ++c)
            out[c] = _mm512_fmadd_ps(w, _mm512_loadu_ps(vt + 16 * c), out[c]);
    }
#pragma GCC unroll 8
    for (int c = 0; c < Chunks; ++c)
        _mm512_storeu_ps(o + 16 * c, out[c]);
}

// One sequence's decoding step attends with a few thousand multiply-adds per layer: handing that to the pool costs
// more than it saves until the cache is long. A batched step's rows share it out (the bundled model's 16 rows,
// ~80,000: the other core otherwise waited through it). fn(i, weights) for every i in [0, count).
template <typename Fn>
void forEachHead(std::int64_t count, std::int64_t work, const Fn& fn) {
    if (work < (1 << 15)) {
        std::vector<float> weights;
        for (std::int64_t i = 0; i < count; ++i)
            fn(i, weights);
        return;
    }
    // Chunks of several heads: one claim per head had the two threads trade the shared counter's cache line 96
    // times per call.
    auto& pool = ThreadPool::shared();
    const std::int64_t grain = std::max<std::int64_t>(1, count / (8 * pool.size()));
    pool.parallelFor(count, grain, [&](std::int64_t begin, std::int64_t end) {
        std::vector<float> weights;
        for (std::int64_t i = begin; i < end; ++i)
            fn(i, weights);
    });
}

}  // namespace

void attendOneQuery(const float* q, const KvLayout& keys, const KvLayout& values, float* out, std::int64_t batch, std::int64_t heads,
                    std::int64_t group, std::int64_t length, std::int64_t headDim, float scale) {
    const AttentionRequest all{keys, values, batch, length};
    attendOneQueryEach(q, &all, 1, out, heads, group, headDim, scale);
}

void attendOneQueryEach(const float* q, const AttentionRequest* requests, std::int64_t count, float* out, std::int64_t heads,
                        std::int64_t group, std::int64_t headDim, float scale) {
    const auto dot = hasAvx2() ? dotAvx2 : dotPortable;
    const auto axpy = hasAvx2() ? axpyAvx2 : axpyPortable;
    const bool wide = hasAvx512();
    // (request, row within it) of every query row.
    std::vector<std::pair<const AttentionRequest*, std::int64_t>> rows;
    std::int64_t work = 0;
    for (std::int64_t r = 0; r < count; ++r) {
        for (std::int64_t b = 0; b < requests[r].rows; ++b)
            rows.emplace_back(&requests[r], b);
        work += requests[r].rows * heads * requests[r].length * headDim;
    }
    // A task per key/value head of a row: it stores the head's new key and value (if any), then its query heads attend.
    const std::int64_t kvHeads = heads / group;
    forEachHead(static_cast<std::int64_t>(rows.size()) * kvHeads, work, [&](std::int64_t index, std::vector<float>& weights) {
        const auto& [request, b] = rows[static_cast<std::size_t>(index / kvHeads)];
        const std::int64_t kvHead = index % kvHeads;
        const auto& keys = request->keys;
        const auto& values = request->values;
        const auto keyAt = b * keys.batchStride + kvHead * keys.headStride;
        const auto valueAt = b * values.batchStride + kvHead * values.headStride;
        if (const auto& append = request->append; append.keys) {
            const auto position = request->length - 1;
            std::copy_n(append.keys + b * append.stride + kvHead * headDim, headDim, append.keyCache + keyAt + position * keys.rowStride);
            std::copy_n(append.values + b * append.stride + kvHead * headDim, headDim,
                        append.valueCache + valueAt + position * values.rowStride);
        }
        const float* k = keys.data + keyAt;
        const float* v = values.data + valueAt;
        for (std::int64_t h = kvHead * group; h < (kvHead + 1) * group; ++h) {
            const auto query = (index / kvHeads) * heads + h;  // the row's query head h
            const float* qh = q + query * headDim;
            float* o = out + query * headDim;
            if (wide && headDim == 64)
                attendHeadAvx512<4>(qh, k, keys.rowStride, v, values.rowStride, request->length, scale, o, weights);
            else if (wide && headDim == 128)
                attendHeadAvx512<8>(qh, k, keys.rowStride, v, values.rowStride, request->length, scale, o, weights);
            else
                attendHead(qh, k, keys.rowStride, v, values.rowStride, request->length, headDim, scale, o, weights, dot, axpy);
        }
    });
}

}  // namespace dragoman::kernels
