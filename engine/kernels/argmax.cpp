#include "kernels/argmax.h"

#include "kernels/simd512.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace dragoman::kernels {
namespace {

std::int64_t firstArgmaxScalar(const float* row, std::int64_t n) {
    std::int64_t best = 0;
    for (std::int64_t i = 0; i < n; ++i) {
        if (std::isnan(row[i])) return i;
        if (row[i] > row[best]) best = i;
    }
    return best;
}

// The first place in the row where `Predicate` holds against `value` (16 lanes at a time, the last ones masked), or -1.
template <int Predicate>
DRAGOMAN_AVX512 std::int64_t firstWhere(const float* row, std::int64_t n, __m512 value) {
    for (std::int64_t i = 0; i < n; i += 16) {
        const auto lanes = firstLanes16(n - i);
        const auto hit = _mm512_mask_cmp_ps_mask(lanes, _mm512_maskz_loadu_ps(lanes, row + i), value, Predicate);
        if (hit != 0) return i + __builtin_ctz(hit);
    }
    return -1;
}

DRAGOMAN_AVX512 std::int64_t firstArgmaxAvx512(const float* row, std::int64_t n) {
    const auto lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
    __m512 top = lowest;
    __mmask16 nan = 0;
    for (std::int64_t i = 0; i < n; i += 16) {
        const auto v = _mm512_mask_loadu_ps(lowest, firstLanes16(n - i), row + i);  // past the end: -inf, never above
        nan |= _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
        top = _mm512_maskz_max_ps(kAll16, top, v);  // simd512.h: the masked form, as GCC 12 inlines it cleanly
    }
    if (nan != 0) return firstWhere<_CMP_UNORD_Q>(row, n, _mm512_setzero_ps());
    // The lanes' largest through memory (GCC 12's _mm512_reduce_max_ps warns as simd512.h says). Equal compares -0 and
    // +0 alike, as the scalar loop's strict > does: the first of either is taken, whichever zero the maximum is.
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, top);
    float largest = lanes[0];
    for (const float lane : lanes)
        largest = std::max(largest, lane);
    return firstWhere<_CMP_EQ_OQ>(row, n, _mm512_set1_ps(largest));
}

}  // namespace

std::int64_t firstArgmax(const float* row, std::int64_t n) {
    if (n <= 0) return 0;
    return hasAvx512() ? firstArgmaxAvx512(row, n) : firstArgmaxScalar(row, n);
}

}  // namespace dragoman::kernels
