#include "kernels/bf16_matmul.h"

#include "kernels/avx512_matmul.h"
#include "kernels/bf16.h"
#include "kernels/simd.h"
#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

namespace dragoman::kernels {
namespace {

constexpr std::int64_t kRowBlock = 64;  // weight rows per block: 64 x 4096 x 2 bytes stay within L2

template <typename W>
void portableBlock(const float* x, const W* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t rowBegin,
                   std::int64_t rowEnd) {
    for (std::int64_t r = 0; r < m; ++r)
        for (std::int64_t j = rowBegin; j < rowEnd; ++j) {
            float sum = 0;
            for (std::int64_t i = 0; i < k; ++i)
                sum += x[r * k + i] * widen(w[j * k + i]);
            y[r * n + j] = sum;
        }
}

// Up to 4 activation rows against 2 weight rows at a time: 8 accumulators, every widened weight used
// by every row. K must be a multiple of 8 (the caller handles the tail). The row loops are unrolled by
// pragma: -O2 left them rolled, which kept the accumulators on the stack and made 4 rows 4x slower than 1.
template <int Rows, typename W>
__attribute__((target("avx2,fma,f16c"), always_inline)) inline void tile(const float* x, const W* w, float* y, std::int64_t n,
                                                                         std::int64_t k, std::int64_t j) {
    __m256 acc0[Rows], acc1[Rows];
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r)
        acc0[r] = acc1[r] = _mm256_setzero_ps();
    const W* w0 = w + j * k;
    const W* w1 = w0 + k;
    // The next pair of weight rows is requested into L2 while this pair is summed (as gemvBlock does): a batched
    // decoding step streams the weights from memory through these tiles.
    const char* next = reinterpret_cast<const char*>(w1 + k);
    for (std::int64_t i = 0; i < k; i += 8) {
        _mm_prefetch(next + (i / 8) * 64, _MM_HINT_T1);
        const __m256 a = load8(w0 + i), b = load8(w1 + i);
#pragma GCC unroll 8
        for (int r = 0; r < Rows; ++r) {
            const __m256 xv = _mm256_loadu_ps(x + r * k + i);
            acc0[r] = _mm256_fmadd_ps(xv, a, acc0[r]);
            acc1[r] = _mm256_fmadd_ps(xv, b, acc1[r]);
        }
    }
#pragma GCC unroll 8
    for (int r = 0; r < Rows; ++r) {
        y[r * n + j] = sum8(acc0[r]) * kSumScale<W>;
        y[r * n + j + 1] = sum8(acc1[r]) * kSumScale<W>;
    }
}

template <int Rows, typename W>
__attribute__((target("avx2,fma,f16c"))) void singleRow(const float* x, const W* w, float* y, std::int64_t n, std::int64_t k,
                                                        std::int64_t j) {
    __m256 acc[Rows];
#pragma GCC unroll 4
    for (int r = 0; r < Rows; ++r)
        acc[r] = _mm256_setzero_ps();
    const W* w0 = w + j * k;
    for (std::int64_t i = 0; i < k; i += 8) {
        const __m256 a = load8(w0 + i);
#pragma GCC unroll 4
        for (int r = 0; r < Rows; ++r)
            acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(x + r * k + i), a, acc[r]);
    }
#pragma GCC unroll 4
    for (int r = 0; r < Rows; ++r)
        y[r * n + j] = sum8(acc[r]) * kSumScale<W>;
}

template <int Rows, typename W>
__attribute__((target("avx2,fma,f16c"))) void avx2RowsAgainstBlock(const float* x, const W* w, float* y, std::int64_t n, std::int64_t k,
                                                                   std::int64_t rowBegin, std::int64_t rowEnd) {
    std::int64_t j = rowBegin;
    for (; j + 1 < rowEnd; j += 2)
        tile<Rows, W>(x, w, y, n, k, j);
    if (j < rowEnd) singleRow<Rows, W>(x, w, y, n, k, j);
}

// Short weight rows (<= 2 KiB, e.g. K = 512 in float32): one weight row at a time, read as a single
// sequential stream. Interleaving several short rows measured 30-40% slower here (the hardware
// prefetcher follows one stream per row better than four streams a few KiB apart), while long rows
// favour the interleaved tiles above. Chains independent accumulators per activation row.
template <int Rows, typename W>
__attribute__((target("avx2,fma,f16c"))) void shortRowsAgainstBlock(const float* x, const W* w, float* y, std::int64_t n, std::int64_t k,
                                                                    std::int64_t rowBegin, std::int64_t rowEnd) {
    static_assert(Rows <= 2, "more rows would change the chains, and with them each row's sums");
    constexpr int Chains = 4;
    for (std::int64_t j = rowBegin; j < rowEnd; ++j) {
        const W* row = w + j * k;
        __m256 acc[Rows][Chains];
#pragma GCC unroll 4
        for (int r = 0; r < Rows; ++r)
#pragma GCC unroll 4
            for (int c = 0; c < Chains; ++c)
                acc[r][c] = _mm256_setzero_ps();
        std::int64_t i = 0;
        for (; i + 8 * Chains <= k; i += 8 * Chains) {
#pragma GCC unroll 4
            for (int c = 0; c < Chains; ++c) {
                const __m256 wv = load8(row + i + 8 * c);
#pragma GCC unroll 4
                for (int r = 0; r < Rows; ++r)
                    acc[r][c] = _mm256_fmadd_ps(_mm256_loadu_ps(x + r * k + i + 8 * c), wv, acc[r][c]);
            }
        }
        for (; i < k; i += 8) {
            const __m256 wv = load8(row + i);
#pragma GCC unroll 4
            for (int r = 0; r < Rows; ++r)
                acc[r][0] = _mm256_fmadd_ps(_mm256_loadu_ps(x + r * k + i), wv, acc[r][0]);
        }
#pragma GCC unroll 4
        for (int r = 0; r < Rows; ++r) {
            __m256 total = acc[r][0];
#pragma GCC unroll 4
            for (int c = 1; c < Chains; ++c)
                total = _mm256_add_ps(total, acc[r][c]);
            y[r * n + j] = sum8(total) * kSumScale<W>;
        }
    }
}

// The sequential walk pays off for rows of at most 2 KiB that are also short in elements (K = 512 in float32);
// 8-bit rows of K = 2048 are 2 KiB too but, like bf16's 4 KiB, go faster interleaved.
template <typename W>
bool shortRows(std::int64_t k) {
    return k * static_cast<std::int64_t>(sizeof(W)) <= 2048 && k <= 1024;
}

// Up to 4 activation rows against a block of weight rows, with the walk chosen by the rows' length.
template <int Rows, typename W>
void rowGroup(bool sequential, const float* x, const W* w, float* y, std::int64_t n, std::int64_t k, std::int64_t rowBegin,
              std::int64_t rowEnd) {
    if (sequential)
        shortRowsAgainstBlock<Rows, W>(x, w, y, n, k, rowBegin, rowEnd);
    else
        avx2RowsAgainstBlock<Rows, W>(x, w, y, n, k, rowBegin, rowEnd);
}

template <typename W>
__attribute__((target("avx2,fma,f16c"))) void avx2Block(const float* x, const W* w, float* y, std::int64_t m, std::int64_t n,
                                                        std::int64_t k, std::int64_t rowBegin, std::int64_t rowEnd) {
    // The weight block stays in cache while every group of 4 activation rows passes over it. Every output is
    // summed in the same order whatever the other rows are (one accumulator per output for long weight rows,
    // four chains for short ones, taken two activation rows at a time): a sequence decoded in a batch gets
    // exactly the numbers it gets alone.
    const bool sequential = shortRows<W>(k);
    const std::int64_t group = sequential ? 2 : 4;
    for (std::int64_t r = 0; r < m; r += group) {
        const float* xr = x + r * k;
        float* yr = y + r * n;
        switch (std::min<std::int64_t>(group, m - r)) {
            case 4:
                avx2RowsAgainstBlock<4, W>(xr, w, yr, n, k, rowBegin, rowEnd);
                break;
            case 3:
                avx2RowsAgainstBlock<3, W>(xr, w, yr, n, k, rowBegin, rowEnd);
                break;
            case 2:
                rowGroup<2, W>(sequential, xr, w, yr, n, k, rowBegin, rowEnd);
                break;
            default:
                rowGroup<1, W>(sequential, xr, w, yr, n, k, rowBegin, rowEnd);
                break;
        }
    }
}

// One activation row (a decoding step): eight weight rows at once, one accumulator each. Each row is a
// separate stream; with 4 KiB rows every one starts on a new page, where the hardware prefetcher restarts,
// and eight streams in flight hide more of that than four: 6-16% faster over the HY-MT 1.8B decode
// sequence (A/B in one process, 2 cores). Short rows: one at a time.
template <typename W>
__attribute__((target("avx2,fma,f16c"))) void gemvBlock(const float* x, const W* w, float* y, std::int64_t k, std::int64_t rowBegin,
                                                        std::int64_t rowEnd) {
    if (shortRows<W>(k)) return shortRowsAgainstBlock<1, W>(x, w, y, 0, k, rowBegin, rowEnd);
    constexpr int kRows = 8;
    // While a block is summed, the next block (the 8 rows after it, contiguous) is requested into L2, a few cache
    // lines per step, so its streams do not start cold: 6.3 -> 6.8 tokens/s for the HY-MT 1.8B decode sequence
    // (efficiency 0.73 -> 0.79, 4 alternating runs each, AMX Xeon, 2 cores). Into L1 it gained nothing, as
    // non-temporal hints it halved the speed.
    constexpr int kLinesPerStep = kRows * 8 * static_cast<int>(sizeof(W)) / 64;
    std::int64_t j = rowBegin;
    for (; j + kRows <= rowEnd; j += kRows) {
        const W* rows[kRows];
        __m256 acc[kRows];
#pragma GCC unroll 8
        for (int r = 0; r < kRows; ++r) {
            rows[r] = w + (j + r) * k;
            acc[r] = _mm256_setzero_ps();
        }
        const char* next = reinterpret_cast<const char*>(w + (j + kRows) * k);
        const bool prefetchNext = j + 2 * kRows <= rowEnd;
        for (std::int64_t i = 0; i < k; i += 8) {
            if (prefetchNext) {
#pragma GCC unroll 4
                for (int l = 0; l < kLinesPerStep; ++l)
                    _mm_prefetch(next + (i / 8 * kLinesPerStep + l) * 64, _MM_HINT_T1);
            }
            const __m256 xv = _mm256_loadu_ps(x + i);
#pragma GCC unroll 8
            for (int r = 0; r < kRows; ++r)
                acc[r] = _mm256_fmadd_ps(xv, load8(rows[r] + i), acc[r]);
        }
#pragma GCC unroll 8
        for (int r = 0; r < kRows; ++r)
            y[j + r] = sum8(acc[r]) * kSumScale<W>;
    }
    for (; j < rowEnd; ++j)
        singleRow<1, W>(x, w, y, 0, k, j);
}

}  // namespace

__attribute__((target("avx2,fma,f16c"))) static std::int64_t widenAvx2(const std::uint16_t* src, float* dst, std::int64_t begin,
                                                                       std::int64_t end) {
    std::int64_t i = begin;
    for (; i + 7 < end; i += 8)
        _mm256_storeu_ps(dst + i, load8(src + i));
    return i;
}

void widenBf16(const std::uint16_t* src, float* dst, std::int64_t count) {
    ThreadPool::shared().parallelFor(count, 4096, [&](std::int64_t begin, std::int64_t end) {
        std::int64_t i = hasAvx2() ? widenAvx2(src, dst, begin, end) : begin;
        for (; i < end; ++i)
            dst[i] = widen(src[i]);
    });
}

// Whether W [., k] takes the AVX-512 kernels, decided here once: every path that computes a decoding step's outputs
// (matmulTransposed, gemvMany) must pick the same family, or a row's sums would depend on the path. Short rows too:
// the bundled model's 16-row steps (K = 256 in float32) ran 2.5x faster in its tiles than in the sequential walk
// that two rows at a time spent on loads, and one row no slower.
template <typename W>
bool onAvx512(std::int64_t k) {
    return hasAvx2() && k % 8 == 0 && hasAvx512();
}

template <typename W>
void matmulTransposed(const float* x, const W* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    const bool vector = hasAvx2() && k % 8 == 0;
    const bool wide = onAvx512<W>(k);
    ThreadPool::shared().parallelFor(n, kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t block = begin; block < end; block += kRowBlock) {
            const auto blockEnd = std::min(end, block + kRowBlock);
            if (wide)
                avx512Block(x, w, y, m, n, k, block, blockEnd);
            else if (vector && m == 1)
                gemvBlock(x, w, y, k, block, blockEnd);
            else if (vector)
                avx2Block(x, w, y, m, n, k, block, blockEnd);
            else
                portableBlock(x, w, y, m, n, k, block, blockEnd);
        }
    });
}

void bf16MatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    matmulTransposed(x, w, y, m, n, k);
}

void f32MatmulTransposed(const float* x, const float* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    matmulTransposed(x, w, y, m, n, k);
}

void i8MatmulTransposed(const float* x, const std::int8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    matmulTransposed(x, w, y, m, n, k);
}

void fp8MatmulTransposed(const float* x, const std::uint8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    matmulTransposed(x, reinterpret_cast<const Fp8E4M3*>(w), y, m, n, k);
}

}  // namespace dragoman::kernels

namespace dragoman::kernels {

template <typename W>
void gemvPart(const float* x, const GemvOutput& o, std::int64_t k, bool vector, std::int64_t from, std::int64_t to) {
    const auto* w = static_cast<const W*>(o.w);
    if (onAvx512<W>(k))
        avx512Block(x, w, o.y, 1, o.n, k, from, to);
    else if (vector)
        gemvBlock(x, w, o.y, k, from, to);
    else
        portableBlock(x, w, o.y, 1, o.n, k, from, to);
}

std::int64_t rowsOfOutputs(const GemvOutput* outputs, std::size_t count) {
    std::int64_t total = 0;
    for (std::size_t i = 0; i < count; ++i)
        total += outputs[i].n;
    return total;
}

void gemvMany(const float* x, const GemvOutput* outputs, std::size_t count, std::int64_t k) {
    const bool vector = hasAvx2() && k % 8 == 0;
    ThreadPool::shared().parallelFor(rowsOfOutputs(outputs, count), kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        forRowsOfOutputs(outputs, count, begin, end, [&](const GemvOutput& o, std::int64_t from, std::int64_t to) {
            switch (o.type) {
                case WeightType::BF16:
                    gemvPart<std::uint16_t>(x, o, k, vector, from, to);
                    break;
                case WeightType::I8:
                    gemvPart<std::int8_t>(x, o, k, vector, from, to);
                    break;
                case WeightType::FP8:
                    gemvPart<Fp8E4M3>(x, o, k, vector, from, to);
                    break;
            }
        });
    });
}

}  // namespace dragoman::kernels
