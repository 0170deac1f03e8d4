#include "kernels/causal_attention.h"

#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <vector>

namespace dragoman::kernels {
namespace {

constexpr std::int64_t kLanes = 16;
constexpr int kQueries = 8;              // query vectors sharing one pass over the transposed keys
constexpr std::int64_t kPromptRows = 8;  // prompt rows per work item (times the query heads of one key/value head)
constexpr std::int64_t kColumns = 128;   // output columns per pass of the weighted sum (16 accumulators for two queries)

// Keys rounded up to whole pairs of 16-key blocks: the score tile takes two blocks at a time.
std::int64_t pairedKeys(std::int64_t length) {
    return (length + 2 * kLanes - 1) / (2 * kLanes) * (2 * kLanes);
}

// One key/value head's keys [0, length) as blocks of 16 keys, each [headDim][16]: block b, dimension d holds
// K[16b .. 16b + 15][d] (zeros past length), so one vector is sixteen keys' values of one dimension. An even number
// of blocks: the score tile takes two at a time.
void transposeKeys(const float* k, std::int64_t rowStride, std::int64_t length, std::int64_t headDim, float* out) {
    for (std::int64_t b = 0; b < pairedKeys(length) / kLanes; ++b) {
        float* block = out + b * headDim * kLanes;
        for (std::int64_t lane = 0; lane < kLanes; ++lane) {
            const auto t = b * kLanes + lane;
            for (std::int64_t d = 0; d < headDim; ++d)
                block[d * kLanes + lane] = t < length ? k[t * rowStride + d] : 0.0f;
        }
    }
}

// scores[q][t] = scale * query[q] . K[t] for t < length (rounded up to 32), each query a row of headDim.
DRAGOMAN_AVX512 void scoreTile(const std::array<const float*, kQueries>& query, const float* keysT, std::int64_t length,
                               std::int64_t headDim, float scale, float* scores, std::int64_t scoreStride) {
    const __m512 scaleV = _mm512_set1_ps(scale);
    for (std::int64_t b = 0; b * kLanes < length; b += 2) {
        const float* k0 = keysT + b * headDim * kLanes;
        const float* k1 = k0 + headDim * kLanes;
        __m512 acc[kQueries][2];
#pragma GCC unroll 8
        for (int q = 0; q < kQueries; ++q)
            acc[q][0] = acc[q][1] = _mm512_setzero_ps();
        for (std::int64_t d = 0; d < headDim; ++d) {
            const __m512 a = _mm512_loadu_ps(k0 + d * kLanes), c = _mm512_loadu_ps(k1 + d * kLanes);
#pragma GCC unroll 8
            for (int q = 0; q < kQueries; ++q) {
                const __m512 x = _mm512_set1_ps(query[q][d]);
                acc[q][0] = _mm512_fmadd_ps(x, a, acc[q][0]);
                acc[q][1] = _mm512_fmadd_ps(x, c, acc[q][1]);
            }
        }
#pragma GCC unroll 8
        for (int q = 0; q < kQueries; ++q) {
            _mm512_storeu_ps(scores + q * scoreStride + b * kLanes, _mm512_mul_ps(acc[q][0], scaleV));
            _mm512_storeu_ps(scores + q * scoreStride + (b + 1) * kLanes, _mm512_mul_ps(acc[q][1], scaleV));
        }
    }
}

// One query's scores [0, length) become its softmax weights (unnormalised: e^(s - max)), zeros from length to `padded`;
// returns 1 / their sum.
DRAGOMAN_AVX512 float softmaxWeights(float* s, std::int64_t length, std::int64_t padded) {
    __m512 maxV = _mm512_set1_ps(-INFINITY);
    for (std::int64_t t = 0; t < length; t += kLanes)
        maxV = _mm512_maskz_max_ps(kAll16, maxV, _mm512_mask_loadu_ps(_mm512_set1_ps(-INFINITY), firstLanes16(length - t), s + t));
    alignas(64) float lanes[kLanes];
    _mm512_store_ps(lanes, maxV);
    const __m512 maximum = _mm512_set1_ps(*std::max_element(lanes, lanes + kLanes));
    __m512 sumV = _mm512_setzero_ps();
    for (std::int64_t t = 0; t < padded; t += kLanes) {
        const __mmask16 live = firstLanes16(length - t);
        const __m512 e = _mm512_maskz_mov_ps(live, exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(live, s + t), maximum)));
        _mm512_storeu_ps(s + t, e);
        sumV = _mm512_add_ps(sumV, e);
    }
    return 1.0f / sum16(sumV);
}

// out0/out1 [V * 16 columns from c0] = inverse * sum over t < length of weights[t] V[t]: two queries over one pass
// of the value rows.
template <int V>
DRAGOMAN_AVX512 void weightedValues(const float* w0, const float* w1, float inverse0, float inverse1, const float* v,
                                    std::int64_t rowStride, std::int64_t length, float* out0, float* out1) {
    __m512 a0[V], a1[V];
#pragma GCC unroll 8
    for (int j = 0; j < V; ++j)
        a0[j] = a1[j] = _mm512_setzero_ps();
    for (std::int64_t t = 0; t < length; ++t) {
        const __m512 p0 = _mm512_set1_ps(w0[t]), p1 = _mm512_set1_ps(w1[t]);
        const float* row = v + t * rowStride;
#pragma GCC unroll 8
        for (int j = 0; j < V; ++j) {
            const __m512 x = _mm512_loadu_ps(row + j * kLanes);
            a0[j] = _mm512_fmadd_ps(p0, x, a0[j]);
            a1[j] = _mm512_fmadd_ps(p1, x, a1[j]);
        }
    }
    const __m512 i0 = _mm512_set1_ps(inverse0), i1 = _mm512_set1_ps(inverse1);
#pragma GCC unroll 8
    for (int j = 0; j < V; ++j) {
        _mm512_storeu_ps(out0 + j * kLanes, _mm512_mul_ps(a0[j], i0));
        _mm512_storeu_ps(out1 + j * kLanes, _mm512_mul_ps(a1[j], i1));
    }
}

using WeightedValues = void (*)(const float*, const float*, float, float, const float*, std::int64_t, std::int64_t, float*, float*);
constexpr std::array<WeightedValues, 8> kWeightedValues{&weightedValues<1>, &weightedValues<2>, &weightedValues<3>, &weightedValues<4>,
                                                        &weightedValues<5>, &weightedValues<6>, &weightedValues<7>, &weightedValues<8>};

}  // namespace

bool causalAttentionKernel(std::int64_t headDim) {
    return hasAvx512() && headDim > 0 && headDim % kLanes == 0;
}

namespace {

// attendCausal and attendAll: each row sees the keys up to its own position, or all of them.
void attendRows(const QueryLayout& q, const KvLayout& keys, const KvLayout& values, float* out, std::int64_t rows, std::int64_t start,
                std::int64_t heads, std::int64_t group, std::int64_t headDim, float scale, bool causal) {
    const auto kvHeads = heads / group, total = start + rows;
    const auto padded = pairedKeys(total);
    const auto blockFloats = padded * headDim;  // one key/value head's transposed keys
    auto& pool = ThreadPool::shared();
    thread_local std::vector<float> transposed;
    auto& keysT = transposed;  // the workers read the caller's
    keysT.resize(static_cast<std::size_t>(kvHeads * blockFloats));
    pool.parallelFor(kvHeads, 1, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t h = begin; h < end; ++h)
            transposeKeys(keys.data + h * keys.headStride, keys.rowStride, total, headDim, keysT.data() + h * blockFloats);
    });
    // Work items: a key/value head and a block of rows, all query heads of the group. Later rows see more keys, so
    // the items are claimed one at a time.
    const auto rowBlocks = (rows + kPromptRows - 1) / kPromptRows;
    pool.parallelFor(kvHeads * rowBlocks, 1, [&](std::int64_t begin, std::int64_t end) {
        thread_local std::vector<float> scratch;
        scratch.resize(static_cast<std::size_t>(kQueries * padded));
        float* scores = scratch.data();
        for (std::int64_t item = begin; item < end; ++item) {
            const auto kvHead = item / rowBlocks, row0 = item % rowBlocks * kPromptRows;
            const auto vectors = std::min(kPromptRows, rows - row0) * group;  // (row, query head) pairs, row by row
            for (std::int64_t first = 0; first < vectors; first += kQueries) {
                const auto count = std::min<std::int64_t>(kQueries, vectors - first);
                std::array<const float*, kQueries> query{};
                std::array<float*, kQueries> target{};
                std::array<std::int64_t, kQueries> length{};
                for (int i = 0; i < kQueries; ++i) {
                    const auto vector = first + std::min<std::int64_t>(i, count - 1);  // a short chunk repeats its last query
                    const auto row = row0 + vector / group, head = kvHead * group + vector % group;
                    query[i] = q.data + head * q.headStride + row * q.rowStride;
                    target[i] = out + row * heads * headDim + head * headDim;
                    length[i] = causal ? start + row + 1 : total;
                }
                const auto seen = *std::max_element(length.begin(), length.end());
                const auto seenPadded = pairedKeys(seen);
                scoreTile(query, keysT.data() + kvHead * blockFloats, seen, headDim, scale, scores, padded);
                std::array<float, kQueries> inverse{};
                for (int i = 0; i < count; ++i)
                    inverse[i] = softmaxWeights(scores + i * padded, length[i], seenPadded);
                const float* v = values.data + kvHead * values.headStride;
                for (int i = 0; i < count; i += 2) {
                    const int j = std::min<int>(i + 1, static_cast<int>(count) - 1);  // an odd last query pairs with itself
                    for (std::int64_t c0 = 0; c0 < headDim; c0 += kColumns) {
                        const auto columns = std::min(kColumns, headDim - c0);
                        kWeightedValues[static_cast<std::size_t>(columns / kLanes - 1)](scores + i * padded, scores + j * padded,
                                                                                        inverse[i], inverse[j], v + c0, values.rowStride,
                                                                                        seen, target[i] + c0, target[j] + c0);
                    }
                }
            }
        }
    });
    if (keysT.capacity() > (std::size_t{32} << 20)) std::vector<float>().swap(keysT);  // a long prompt's keys are not kept
}

}  // namespace

void attendCausal(const QueryLayout& q, const KvLayout& keys, const KvLayout& values, float* out, std::int64_t rows, std::int64_t start,
                  std::int64_t heads, std::int64_t group, std::int64_t headDim, float scale) {
    attendRows(q, keys, values, out, rows, start, heads, group, headDim, scale, true);
}

void attendAll(const QueryLayout& q, const KvLayout& keys, const KvLayout& values, float* out, std::int64_t rows, std::int64_t heads,
               std::int64_t group, std::int64_t headDim, float scale) {
    attendRows(q, keys, values, out, rows, 0, heads, group, headDim, scale, false);
}

}  // namespace dragoman::kernels
