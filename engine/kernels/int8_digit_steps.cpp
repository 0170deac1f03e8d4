#include "kernels/int8_digit_steps.h"

#include "kernels/simd512.h"

#include <immintrin.h>

#include <algorithm>
#include <numeric>
#include <vector>

namespace dragoman::kernels {
namespace {
namespace int8digits {

#define DRAGOMAN_VNNI __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512vnni")))

constexpr std::int64_t kStep = 64;      // codes per vpdpbusd
constexpr float kLargest = 8355000.0f;  // |X| bound: below 127 * 65793, the largest three balanced digits hold
constexpr __mmask64 kAllCodes = ~__mmask64{0};
// As simd512.h's kAll16, for GCC bug 105593: the zero-masked forms with every lane selected.
constexpr __mmask8 kLanes8 = 0xFF;

std::int64_t paddedDepth(std::int64_t k) {
    return (k + kStep - 1) / kStep * kStep;
}

DRAGOMAN_VNNI float largestMagnitude(const float* x, std::int64_t k, bool& finite) {
    __m512 largest = _mm512_setzero_ps(), poison = _mm512_setzero_ps();  // poison: x * 0 is NaN for a NaN or infinity
    for (std::int64_t i = 0; i < k; i += 16) {
        const auto lanes = firstLanes16(k - i);
        const __m512 v = _mm512_maskz_loadu_ps(lanes, x + i);
        largest = _mm512_maskz_max_ps(kAll16, largest, _mm512_abs_ps(v));
        poison = _mm512_fmadd_ps(v, _mm512_setzero_ps(), poison);
    }
    const float sum = sum16(poison);
    finite = sum == sum;
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, largest);
    return *std::max_element(lanes, lanes + 16);
}

// One row's three digit planes (already zeroed) from its values times `first` (a power of 2) and then `inverse`;
// returns each plane's digit sum.
DRAGOMAN_VNNI void digitsOf(const float* x, std::int64_t k, float first, float inverse, std::int8_t* planes, std::int64_t kp,
                            std::int64_t* sums) {
    const __m512 exact = _mm512_set1_ps(first), factor = _mm512_set1_ps(inverse);
    __m512i total[3] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
    for (std::int64_t i = 0; i < k; i += 16) {
        const auto lanes = firstLanes16(k - i);
        __m512i rest = _mm512_maskz_cvtps_epi32(
            kAll16, _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(lanes, x + i), exact), factor));  // nearest even
        for (int q = 0; q < 3; ++q) {
            // The low byte as a signed digit, the rest carried: X = digit + 256 * rest, exactly.
            const __m512i digit = q < 2 ? _mm512_maskz_srai_epi32(kAll16, _mm512_maskz_slli_epi32(kAll16, rest, 24), 24) : rest;
            rest = _mm512_maskz_srai_epi32(kAll16, _mm512_sub_epi32(rest, digit), 8);
            total[q] = _mm512_add_epi32(total[q], digit);
            _mm512_mask_cvtepi32_storeu_epi8(planes + q * kp + i, lanes, digit);
        }
    }
    for (int q = 0; q < 3; ++q) {
        alignas(64) std::int32_t lanes[16];
        _mm512_store_si512(lanes, total[q]);
        sums[q] = std::accumulate(lanes, lanes + 16, std::int64_t{0});
    }
}

// One 64-code step at depth d of R rows' digit planes against C weight rows (codes past `mask` read as zero; the
// digits there are zero too). The codes, offset to unsigned, meet each plane in one vpdpbusd. The same depth of the
// next C rows is requested into L1 meanwhile, in every step (past the matrix too: a prefetch never faults): without
// it these loads stream at two thirds the rate, and left out of a tile's first step it costs a demand miss per row.
template <int R, int C>
DRAGOMAN_VNNI inline __attribute__((always_inline)) void step(__m512i (&acc)[R][C][3], const std::int8_t* x, std::int64_t kp,
                                                              const std::uint8_t* rows, std::int64_t k, std::int64_t d, __mmask64 mask,
                                                              __m512i offset) {
    __m512i digits[R][3];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
        for (int q = 0; q < 3; ++q)
            digits[r][q] = _mm512_loadu_si512(x + (3 * r + q) * kp + d);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
        _mm_prefetch(reinterpret_cast<const char*>(rows + (C + c) * k + d), _MM_HINT_T0);
        const __m512i codes = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, rows + c * k + d), offset);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r)
#pragma GCC unroll 3
            for (int q = 0; q < 3; ++q)
                acc[r][c][q] = _mm512_dpbusd_epi32(acc[r][c][q], codes, digits[r][q]);
    }
}

// The digit planes' sums, 256^q each, over all lanes (in 64-bit lanes: a plane's lane stays below 2^17 K / 64).
DRAGOMAN_VNNI inline std::int64_t weightedSum(const __m512i (&planes)[3]) {
    __m512i total = _mm512_setzero_si512();
#pragma GCC unroll 3
    for (int q = 0; q < 3; ++q) {
        const __m512i low = _mm512_maskz_cvtepi32_epi64(kLanes8, _mm512_maskz_extracti64x4_epi64(0xF, planes[q], 0));
        const __m512i high = _mm512_maskz_cvtepi32_epi64(kLanes8, _mm512_maskz_extracti64x4_epi64(0xF, planes[q], 1));
        total = _mm512_add_epi64(total, _mm512_maskz_slli_epi64(kLanes8, _mm512_add_epi64(low, high), static_cast<unsigned>(8 * q)));
    }
    alignas(64) std::int64_t lanes[8];
    _mm512_store_si512(lanes, total);
    return std::accumulate(lanes, lanes + 8, std::int64_t{0});
}

// R rows against C consecutive weight rows from row j, read from the line where they start (`skip` codes before them
// masked off); two whole steps per turn of the loop.
template <int R, int C>
DRAGOMAN_VNNI void tile(const Int8DigitRows& x, std::int64_t r0, const std::uint8_t* w, std::int64_t k, std::int64_t skip, float* y,
                        std::int64_t ldy, std::int64_t j) {
    const std::int8_t* digits = x.digits + 3 * r0 * x.kp;
    const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
    __m512i acc[R][C][3];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c)
#pragma GCC unroll 3
            for (int q = 0; q < 3; ++q)
                acc[r][c][q] = _mm512_setzero_si512();
    const std::uint8_t* rows = w + j * k - skip;
    const std::int64_t depth = skip + k;
    std::int64_t d = 0;
    if (skip > 0) {
        step<R, C>(acc, digits, x.kp, rows, k, 0, kAllCodes << skip, offset);
        d = kStep;
    }
    for (; d + 2 * kStep <= depth; d += 2 * kStep) {
        step<R, C>(acc, digits, x.kp, rows, k, d, kAllCodes, offset);
        step<R, C>(acc, digits, x.kp, rows, k, d + kStep, kAllCodes, offset);
    }
    for (; d < depth; d += kStep) {
        const std::int64_t left = depth - d;
        step<R, C>(acc, digits, x.kp, rows, k, d, left >= kStep ? kAllCodes : (__mmask64{1} << left) - 1, offset);
    }
    // Unrolled like every loop over the accumulators: an index the compiler cannot resolve keeps them in memory.
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        const std::int64_t* sums = x.digitSums + 3 * (r0 + r);
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c) {
            // The codes' offset of 128 times each plane's digits taken back; below 2^23 * 128 * K, exact as a double too.
            const std::int64_t total = weightedSum(acc[r][c]) - 128 * (sums[0] + 256 * sums[1] + 65536 * sums[2]);
            y[r * ldy + j + c] = static_cast<float>(static_cast<double>(total) * x.scale[r0 + r]);
        }
    }
}

// R rows against weight rows [begin, end): C rows per tile (3 R C accumulators; from 3 rows one weight row per tile,
// whose digits fit beside them in registers), the rest alone. One row: 4 weight rows per tile (2 streamed at two
// thirds the rate, 6 and 8 no faster).
template <int R>
void rowsAgainst(const Int8DigitRows& x, std::int64_t r0, const std::uint8_t* w, std::int64_t k, std::int64_t skip, float* y,
                 std::int64_t ldy, std::int64_t begin, std::int64_t end) {
    constexpr int C = R <= 2 ? 4 : 1;
    std::int64_t j = begin;
    for (; j + C <= end; j += C)
        tile<R, C>(x, r0, w, k, skip, y, ldy, j);
    for (; j < end; ++j)
        tile<R, 1>(x, r0, w, k, skip, y, ldy, j);
}

}  // namespace int8digits
}  // namespace

bool int8DigitSteps() {
    static const bool yes = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bw") &&
                            __builtin_cpu_supports("avx512vnni");
    return yes;
}

Int8DigitRows int8DigitRows(const float* x, std::int64_t m, std::int64_t k, std::int64_t skip, std::size_t slot) {
    struct Scratch {
        std::vector<std::int8_t> digits;
        std::vector<double> scale;
        std::vector<std::int64_t> sums;
    };
    thread_local std::vector<Scratch> slots;
    if (slots.size() <= slot) slots.resize(slot + 1);
    auto& s = slots[slot];
    const auto kp = int8digits::paddedDepth(skip + k);
    // From a 64-byte line: each step loads a whole line of each plane.
    s.digits.assign(static_cast<std::size_t>(3 * m * kp + 64), 0);
    auto* planes = s.digits.data() + (64 - reinterpret_cast<std::uintptr_t>(s.digits.data()) % 64) % 64;
    s.scale.resize(static_cast<std::size_t>(m));
    s.sums.resize(static_cast<std::size_t>(3 * m));
    for (std::int64_t r = 0; r < m; ++r) {
        bool finite = true;
        const float largest = int8digits::largestMagnitude(x + r * k, k, finite);
        // The factor to integers, in two parts where it passes float's range (a row of values below 2.5e-32): 2^64
        // first, exact, then the rest.
        const double factor = largest > 0.0f && finite ? static_cast<double>(int8digits::kLargest) / largest : 0.0;
        const bool tiny = factor > 1e30;
        const auto inverse = static_cast<float>(tiny ? factor / 0x1p64 : factor);
        auto* sums = s.sums.data() + 3 * r;
        int8digits::digitsOf(x + r * k, k, tiny ? 0x1p64f : 1.0f, inverse, planes + 3 * r * kp + skip, kp, sums);
        s.scale[static_cast<std::size_t>(r)] = !finite        ? __builtin_nan("")
                                               : factor > 0.0 ? 1.0 / ((tiny ? 0x1p64 : 1.0) * static_cast<double>(inverse))
                                                              : 0.0;
    }
    return {planes, kp, s.scale.data(), s.sums.data()};
}

void int8DigitBlock(const Int8DigitRows& x, std::int64_t m, const std::int8_t* w, std::int64_t k, std::int64_t skip, float* y,
                    std::int64_t ldy, std::int64_t begin, std::int64_t end) {
    const auto* codes = reinterpret_cast<const std::uint8_t*>(w);
    for (std::int64_t r = 0; r < m; r += 4) {
        float* yr = y + r * ldy;
        switch (std::min<std::int64_t>(4, m - r)) {
            case 4:
                int8digits::rowsAgainst<4>(x, r, codes, k, skip, yr, ldy, begin, end);
                break;
            case 3:
                int8digits::rowsAgainst<3>(x, r, codes, k, skip, yr, ldy, begin, end);
                break;
            case 2:
                int8digits::rowsAgainst<2>(x, r, codes, k, skip, yr, ldy, begin, end);
                break;
            default:
                int8digits::rowsAgainst<1>(x, r, codes, k, skip, yr, ldy, begin, end);
                break;
        }
    }
}

}  // namespace dragoman::kernels
