#include "kernels/channel_epilogue.h"

#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <algorithm>

namespace dragoman::kernels {
namespace {

// Values per claim of the pool: below this much a hand-off costs more than the pass.
constexpr std::int64_t kGrain = std::int64_t{16} << 10;

// count values of one row from its column j0, sixteen at a time with the masked tail: the same multiply and add per
// value as the loop below (the portable build leaves that loop scalar).
DRAGOMAN_AVX512 void segmentAvx512(float* row, std::int64_t j0, std::int64_t count, const ChannelEpilogue& e) {
    const float* scale = e.scale ? e.scale + (e.scalePerTensor ? 0 : j0) : nullptr;
    const float* bias = e.bias ? e.bias + j0 : nullptr;
    const __m512 tensorScale = scale && e.scalePerTensor ? _mm512_set1_ps(scale[0]) : _mm512_setzero_ps();
    for (std::int64_t j = 0; j < count; j += 16) {
        const __mmask16 lanes = firstLanes16(count - j);
        __m512 v = _mm512_maskz_loadu_ps(lanes, row + j);
        if (scale) v = _mm512_mul_ps(v, e.scalePerTensor ? tensorScale : _mm512_maskz_loadu_ps(lanes, scale + j));
        if (bias) v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(lanes, bias + j));
        _mm512_mask_storeu_ps(row + j, lanes, v);
    }
}

// Values [begin, end) of the rows laid end to end.
void pass(float* y, std::int64_t n, const ChannelEpilogue& e, std::int64_t begin, std::int64_t end) {
    const float* __restrict scale = e.scale;
    const float* __restrict bias = e.bias;
    const bool wide = hasAvx512();
    while (begin < end) {
        const auto j0 = begin % n, count = std::min(n - j0, end - begin);
        float* __restrict row = y + begin;
        if (wide) {
            segmentAvx512(row, j0, count, e);
            begin += count;
            continue;
        }
        if (scale && e.scalePerTensor) {
            const float s = scale[0];
            if (bias)
                for (std::int64_t j = 0; j < count; ++j)
                    row[j] = row[j] * s + bias[j0 + j];
            else
                for (std::int64_t j = 0; j < count; ++j)
                    row[j] *= s;
        } else if (scale && bias) {
            for (std::int64_t j = 0; j < count; ++j)
                row[j] = row[j] * scale[j0 + j] + bias[j0 + j];
        } else if (scale) {
            for (std::int64_t j = 0; j < count; ++j)
                row[j] *= scale[j0 + j];
        } else {
            for (std::int64_t j = 0; j < count; ++j)
                row[j] += bias[j0 + j];
        }
        begin += count;
    }
}

}  // namespace

void scaleAndBiasRows(float* y, std::int64_t rows, std::int64_t n, const ChannelEpilogue& epilogue) {
    if ((!epilogue.scale && !epilogue.bias) || rows <= 0 || n <= 0) return;
    ThreadPool::shared().parallelFor(rows * n, kGrain, [&](std::int64_t begin, std::int64_t end) { pass(y, n, epilogue, begin, end); });
}

}  // namespace dragoman::kernels
