#include "kernels/avx512_matmul.h"

#include "kernels/simd512.h"

#include <algorithm>
#include <array>
#include <utility>

namespace dragoman::kernels {
namespace {

// Rows activation rows against WRows consecutive weight rows from row j: Rows x WRows accumulators, each weight
// vector widened once for all rows, each activation vector loaded once for all weight rows. While the tile is
// summed, the next WRows weight rows (contiguous after it) are requested into L2 a few lines per step: one
// decoding step streams every weight from memory through these tiles, and a stream that starts cold stalls.
template <int Rows, int WRows, typename W>
DRAGOMAN_AVX512 void tile(const float* x, const W* w, float* y, std::int64_t n, std::int64_t k, std::int64_t j) {
    static_assert(Rows * WRows + WRows + 2 <= 32, "the accumulators, weights, activations and a constant must stay in registers");
    constexpr int kLinesPerStep = (WRows * 16 * static_cast<int>(sizeof(W)) + 63) / 64;
    __m512 acc[WRows][Rows];
#pragma GCC unroll 8
    for (int q = 0; q < WRows; ++q)
#pragma GCC unroll 8
        for (int r = 0; r < Rows; ++r)
            acc[q][r] = _mm512_setzero_ps();
    const W* rows = w + j * k;
    const char* next = reinterpret_cast<const char*>(w + (j + WRows) * k);
    std::int64_t i = 0;
    for (; i + 16 <= k; i += 16) {
#pragma GCC unroll 8
        for (int l = 0; l < kLinesPerStep; ++l)
            _mm_prefetch(next + (i / 16 * kLinesPerStep + l) * 64, _MM_HINT_T1);
        __m512 wv[WRows];
#pragma GCC unroll 8
        for (int q = 0; q < WRows; ++q)
            wv[q] = load16(rows + q * k + i);
#pragma GCC unroll 8
        for (int r = 0; r < Rows; ++r) {
            __m512 xv = _mm512_loadu_ps(x + r * k + i);
            // Kept in a register: folded into each multiply-add as a memory operand instead, the same 64 bytes were
            // read WRows times per step and the loads, not the multiply-adds, set the pace.
            __asm__("" : "+v"(xv));
#pragma GCC unroll 8
            for (int q = 0; q < WRows; ++q)
                acc[q][r] = _mm512_fmadd_ps(xv, wv[q], acc[q][r]);
        }
    }
    if (i < k) {  // K = 16t + 8: the last eight in lanes 0-7, lanes 8-15 left as they are
        constexpr __mmask16 kLow = 0x00FF;
        __m512 wv[WRows];
#pragma GCC unroll 8
        for (int q = 0; q < WRows; ++q)
            wv[q] = _mm512_castps256_ps512(load8(rows + q * k + i));
#pragma GCC unroll 8
        for (int r = 0; r < Rows; ++r) {
            const __m512 xv = _mm512_maskz_loadu_ps(kLow, x + r * k + i);
#pragma GCC unroll 8
            for (int q = 0; q < WRows; ++q)
                acc[q][r] = _mm512_mask3_fmadd_ps(xv, wv[q], acc[q][r], kLow);
        }
    }
#pragma GCC unroll 8
    for (int q = 0; q < WRows; ++q)
#pragma GCC unroll 8
        for (int r = 0; r < Rows; ++r)
            y[r * n + j + q] = sum16(acc[q][r]) * kSumScale<W>;
}

// Rows activation rows against a block of weight rows: as many weight rows per tile as registers allow (eight for
// one row: eight streams in flight hide the page starts of 4 KiB rows), the rest one at a time.
template <int Rows, typename W>
void rowsAgainstBlock(const float* x, const W* w, float* y, std::int64_t n, std::int64_t k, std::int64_t rowBegin, std::int64_t rowEnd) {
    constexpr int WRows = std::min(8, 28 / (Rows + 1));
    std::int64_t j = rowBegin;
    for (; j + WRows <= rowEnd; j += WRows)
        tile<Rows, WRows, W>(x, w, y, n, k, j);
    for (; j < rowEnd; ++j)
        tile<Rows, 1, W>(x, w, y, n, k, j);
}

// rowsAgainstBlock<1..8, W>, indexed by the number of rows less one.
template <typename W, std::size_t... Less>
constexpr auto rowKernels(std::index_sequence<Less...>) {
    return std::array{&rowsAgainstBlock<static_cast<int>(Less) + 1, W>...};
}

}  // namespace

template <typename W>
void avx512Block(const float* x, const W* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t rowBegin,
                 std::int64_t rowEnd) {
    static constexpr auto kernels = rowKernels<W>(std::make_index_sequence<8>{});
    for (std::int64_t r = 0; r < m; r += 8)
        kernels[static_cast<std::size_t>(std::min<std::int64_t>(8, m - r) - 1)](x + r * k, w, y + r * n, n, k, rowBegin, rowEnd);
}

template void avx512Block<float>(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t);
template void avx512Block<std::uint16_t>(const float*, const std::uint16_t*, float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                         std::int64_t);
template void avx512Block<std::int8_t>(const float*, const std::int8_t*, float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                       std::int64_t);
template void avx512Block<Fp8E4M3>(const float*, const Fp8E4M3*, float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                   std::int64_t);

}  // namespace dragoman::kernels
