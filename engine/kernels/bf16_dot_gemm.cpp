#include "kernels/bf16_dot_gemm.h"

#include "kernels/onednn_matmul.h"
#include "kernels/simd512.h"
#include "kernels/thread_pool.h"
#include "util/overrides.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

namespace dragoman::kernels {
namespace {

#define DRAGOMAN_AVX512BF16 __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512bf16")))

constexpr std::int64_t kDepth = 32;  // bf16 values per register: one vdpbf16ps step
// A tile is 4 activation rows by 6 weight rows: 24 accumulators, 4 activation registers and the weight register
// being used, of the 32. Each step loads 10 registers for 24 dot products. (llama.cpp's tinyBLAS has the same shape
// of kernel; here the activations are narrowed once per product and laid out tile by tile.)
constexpr int kTileRows = 4;
constexpr int kTileCols = 6;
// Activation rows per sweep over the weights: about 512 KiB of bf16 rows, kept in L2 while the weights stream by.
constexpr std::int64_t kSweepBytes = std::int64_t{512} << 10;
// Weight tiles a thread claims at a time: 16 (96 consecutive weight rows), or fewer where that would leave a thread
// fewer than 8 claims. Claims of 4 tiles cost prompts a fifth of their speed on 2 threads (40 rows against 6144 x 2048:
// 234 against 277-290 GMAC/s, one thread 151): the two threads' short runs of rows and shared output lines.
constexpr std::int64_t kBlocksPerClaim = 16;
constexpr std::int64_t kFewestBlocksPerClaim = 4;
constexpr std::int64_t kStepRows = 16;                    // the most rows of a batched decoding step (StepBatcher's places)
constexpr std::int64_t kPrefetchedBlockBytes = 32 << 10;  // NextBlock: beside the block in use and the rows, in L1

std::int64_t paddedDepth(std::int64_t k) {
    return (k + kDepth - 1) / kDepth * kDepth;
}

// `count` float32 values (at most 32) -> 32 bf16, nearest even, zeros past count.
DRAGOMAN_AVX512BF16 __m512i narrow32(const float* p, std::int64_t count) {
    const __m512 low = _mm512_maskz_loadu_ps(firstLanes16(count), p), high = _mm512_maskz_loadu_ps(firstLanes16(count - 16), p + 16);
    return reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(high, low));
}

// Weight rows are read from the 64-byte line where they start: a checkpoint's tensors start wherever its header ends
// (safetensors aligns them to 8 bytes), and a 32-wide load across two lines made an 8-row step against 6144 x 2048
// weights about 20 % slower than the same weights 64-byte aligned (microbenchmark, 2 threads, Zen 5). When every row
// starts at the same place in a line (K a multiple of 32), each row is read from that line's start, the `skip` lanes
// before it masked off, and the activations are laid out `skip` lanes later to meet them. Otherwise rows are read
// where they start (skip 0).
std::int64_t leadingLanes(const std::uint16_t* w, std::int64_t k) {
    const auto address = reinterpret_cast<std::uintptr_t>(w);
    if (k % kDepth != 0 || address % 2 != 0) return 0;
    return static_cast<std::int64_t>(address % 64 / 2);
}

// Rows [begin, end) of x into tiles: tile t (rows 4t..4t+3) holds for each 32-deep step its rows' 32 values one after
// another, so a tile's activations are one sequential stream. Row values start `skip` lanes in (zeros before them);
// kp covers skip + k.
DRAGOMAN_AVX512BF16 void narrowRows(const float* x, std::int64_t k, std::int64_t skip, std::int64_t kp, std::uint16_t* out,
                                    std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
        std::uint16_t* to = out + (i / kTileRows) * kTileRows * kp + (i % kTileRows) * kDepth;
        const float* row = x + i * k;
        std::int64_t d = 0;
        if (skip > 0) {  // the first step: zeros, then the row's first values
            alignas(64) float first[kDepth] = {};
            std::copy_n(row, std::min(kDepth - skip, k), first + skip);
            _mm512_storeu_si512(to, narrow32(first, kDepth));
            d = kDepth;
        }
        for (; d < kp; d += kDepth)
            _mm512_storeu_si512(to + d * kTileRows, narrow32(row + d - skip, std::min(kDepth, k - (d - skip))));
    }
}

// The sums of four accumulators' lanes, [sum a, sum b, sum c, sum d]: pairs of lanes added in shuffles, 4 outputs
// in about 15 instructions. (The zero-masked forms with every lane selected: GCC 12's unmasked ones warn, simd512.h.)
DRAGOMAN_AVX512BF16 inline __m128 sum4x16(__m512 a, __m512 b, __m512 c, __m512 d) {
    constexpr __mmask8 kAll8 = 0xFF;
    const __m512 ab = _mm512_add_ps(_mm512_maskz_unpacklo_ps(kAll16, a, b), _mm512_maskz_unpackhi_ps(kAll16, a, b));
    const __m512 cd = _mm512_add_ps(_mm512_maskz_unpacklo_ps(kAll16, c, d), _mm512_maskz_unpackhi_ps(kAll16, c, d));
    const __m512d abd = _mm512_castps_pd(ab), cdd = _mm512_castps_pd(cd);
    const __m512 blocks = _mm512_add_ps(_mm512_castpd_ps(_mm512_maskz_unpacklo_pd(kAll8, abd, cdd)),
                                        _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(kAll8, abd, cdd)));
    // The four 128-bit blocks through memory: GCC 12's 512-to-256 casts are unmasked extracts too.
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, blocks);
    return _mm_add_ps(_mm_add_ps(_mm_load_ps(lanes), _mm_load_ps(lanes + 4)), _mm_add_ps(_mm_load_ps(lanes + 8), _mm_load_ps(lanes + 12)));
}

// Lines of the weight block a decoding step reads next, requested while the tiles of this block run: `rate` 64-byte
// lines per 32-deep step from line `first` on (line i is row i % cols at depth 32 * (i / cols)), so the requests are
// spread over all of the block's row tiles. Why: a step of 5-16 rows reads each block once from memory (its first
// row tile) and then from L1 (the others), and the memory stood idle during those; with the next block requested
// into L1 meanwhile, 8 rows against 6144 x 2048 bf16 weights took 1.36x the time of one row instead of 1.58x, and
// against the 1.8B's output layer (120818 x 2048) 1.2-1.4x instead of 1.5-1.9x (microbenchmark, 2 threads, Zen 5).
// Into L2 (prefetcht1), or all of it during one tile, measured no better than none; 4-row steps (one tile) and blocks
// past L1 (K = 6144: 72 KiB) measured no faster with it.
struct NextBlock {
    const std::uint16_t* rows = nullptr;  // none: the last block of a claim
    std::int64_t cols = 0, rate = 0, first = 0;
};

// One 32-deep step at depth d with only the `mask` lanes of the weight rows: the first step's lanes before the rows
// start (leadingLanes), the last step's past the end.
template <int R, int C>
DRAGOMAN_AVX512BF16 inline void maskedStep(__m512 (&acc)[R][C], const std::uint16_t* x, const std::uint16_t* w, std::int64_t k,
                                           std::int64_t d, __mmask32 mask) {
#pragma GCC unroll 6
    for (int c = 0; c < C; ++c) {
        const auto wv = reinterpret_cast<__m512bh>(_mm512_maskz_loadu_epi16(mask, w + c * k + d));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r)
            acc[r][c] = _mm512_dpbf16_ps(acc[r][c], reinterpret_cast<__m512bh>(_mm512_loadu_si512(x + d * kTileRows + r * kDepth)), wv);
    }
}

// One whole 32-deep step at depth d.
template <int R, int C>
DRAGOMAN_AVX512BF16 inline __attribute__((always_inline)) void fullStep(__m512 (&acc)[R][C], const std::uint16_t* x, const std::uint16_t* w,
                                                                        std::int64_t k, std::int64_t d) {
    __m512bh xv[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
        xv[r] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(x + d * kTileRows + r * kDepth));
#pragma GCC unroll 6
    for (int c = 0; c < C; ++c) {
        const auto wv = reinterpret_cast<__m512bh>(_mm512_loadu_si512(w + c * k + d));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r)
            acc[r][c] = _mm512_dpbf16_ps(acc[r][c], xv[r], wv);
    }
}

// The dot products of R activation rows (a tile of narrowRows(), zero-padded to a multiple of 32) and C weight rows
// over all of K, in one pass: y[r * ldy + c]. Weight row c is read from w + c * k over skip + K lanes, the first
// `skip` and those past the end masked off (leadingLanes). Splitting K into passes that keep the weights in L1
// measured slower (1.2-1.4x) than streaming both from L2.
template <int R, int C>
DRAGOMAN_AVX512BF16 void tile(const std::uint16_t* x, const std::uint16_t* w, std::int64_t k, std::int64_t skip, float* y, std::int64_t ldy,
                              NextBlock next) {
    const std::int64_t depth = skip + k;
    const std::int64_t nextLines = next.rows ? next.cols * ((depth + kDepth - 1) / kDepth) : 0;
    std::int64_t line = next.first;
    __m512 acc[R][C];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 6
        for (int c = 0; c < C; ++c)
            acc[r][c] = _mm512_setzero_ps();
    const std::int64_t full = depth / kDepth * kDepth;
    std::int64_t d = 0;
    if (skip > 0) {  // the first step, from the line where the rows start (depth > 32: K is a multiple of 32)
        maskedStep(acc, x, w, k, 0, static_cast<__mmask32>(~std::uint32_t{0} << skip));
        d = kDepth;
    }
    if (nextLines == 0) {
        // Four steps per turn of the loop and nothing else in it: a decoding step's weights stream from memory, and
        // how many of their loads are in flight is set by how many instructions the core holds between them.
        for (; d + 4 * kDepth <= full; d += 4 * kDepth) {
#pragma GCC unroll 4
            for (int u = 0; u < 4; ++u)
                fullStep(acc, x, w, k, d + u * kDepth);
        }
    }
    for (; d < full; d += kDepth) {
        fullStep(acc, x, w, k, d);
        for (const auto last = std::min(nextLines, line + next.rate); line < last; ++line)
            _mm_prefetch(reinterpret_cast<const char*>(next.rows + (line % next.cols) * k + (line / next.cols) * kDepth), _MM_HINT_T0);
    }
    if (d < depth)  // the last, partial step of a depth that is not a multiple of 32
        maskedStep(acc, x, w, k, d, static_cast<__mmask32>((std::uint64_t{1} << (depth - d)) - 1));
    const __m512 zero = _mm512_setzero_ps();
#pragma GCC unroll 6
    for (int c = 0; c < C; ++c) {
        alignas(16) float sums[4];
        // Rows past R are zero vectors; the indices stay in range for the compiler.
        _mm_store_ps(sums, sum4x16(acc[0][c], R > 1 ? acc[R > 1 ? 1 : 0][c] : zero, R > 2 ? acc[R > 2 ? 2 : 0][c] : zero,
                                   R > 3 ? acc[R > 3 ? 3 : 0][c] : zero));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r)
            y[r * ldy + c] = sums[r];
    }
}

using TileFn = void (*)(const std::uint16_t*, const std::uint16_t*, std::int64_t, std::int64_t, float*, std::int64_t, NextBlock);

template <int R, std::size_t... C>
constexpr std::array<TileFn, kTileCols> tileRow(std::index_sequence<C...>) {
    return {{&tile<R, static_cast<int>(C) + 1>...}};
}
template <std::size_t... R>
constexpr std::array<std::array<TileFn, kTileCols>, kTileRows> tileTable(std::index_sequence<R...>) {
    return {{tileRow<static_cast<int>(R) + 1>(std::make_index_sequence<kTileCols>{})...}};
}
// kTiles[rows - 1][cols - 1]: edge tiles are the same code with fewer registers, so every output is summed alike.
constexpr auto kTiles = tileTable(std::make_index_sequence<kTileRows>{});

// Scratch kept per thread between calls: fresh megabyte vectors are pages the kernel zeroes on every product.
std::vector<std::uint16_t>& narrowedRows() {
    thread_local std::vector<std::uint16_t> rows;
    return rows;
}

// 8-bit weights (int8 or float8 E4M3 codes, weight-only quantized) for the tiles: a block's rows widened to their
// exact values in bf16 (int8 and E4M3 values are bf16 values), into per-thread scratch, once per sweep, then read by
// every row tile of the sweep. E4M3's 2^8 (load16() gives its values that much too small) is put back before the
// narrowing, which is exact, so the tiles' sums need no scaling afterwards (a strided pass over the outputs).
template <typename W>
DRAGOMAN_AVX512BF16 void widenBlock(const W* w, std::int64_t rows, std::int64_t k, std::uint16_t* out) {
    const __m512 scale = _mm512_set1_ps(kSumScale<W>);
    for (std::int64_t r = 0; r < rows; ++r) {
        const W* from = w + r * k;
        std::uint16_t* to = out + r * k;
        std::int64_t d = 0;
        for (; d + kDepth <= k; d += kDepth) {
            __m512 high = load16(from + d + 16), low = load16(from + d);
            if constexpr (kSumScale<W> != 1.0f) {
                high = _mm512_mul_ps(high, scale);
                low = _mm512_mul_ps(low, scale);
            }
            _mm512_storeu_si512(to + d, reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(high, low)));
        }
        for (; d < k; ++d)  // exact values: the top half of the float32 is the bf16
            to[d] = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(widen(from[d])) >> 16);
    }
}

// A block of widened rows, 64-byte aligned so K a multiple of 32 reads whole lines (leadingLanes() 0, as the bf16
// kernel on a tensor from torch's allocator: the equality tst_kernels checks).
std::uint16_t* widenedBlock(std::int64_t k) {
    thread_local std::vector<std::uint16_t> block;
    block.resize(static_cast<std::size_t>(kTileCols * k + kDepth));
    const auto address = reinterpret_cast<std::uintptr_t>(block.data());
    return block.data() + (64 - address % 64) % 64 / 2;
}

// The line where the weights' first row starts (leadingLanes() before it).
const std::uint16_t* lineStart(const std::uint16_t* w, std::int64_t skip) {
    return reinterpret_cast<const std::uint16_t*>(reinterpret_cast<std::uintptr_t>(w) - static_cast<std::uintptr_t>(skip) * 2);
}

// W is std::uint16_t for bf16 weights (read in place) or an 8-bit code type (widenBlock per block).
template <typename W>
void product(const float* x, const W* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    constexpr bool kInPlace = std::is_same_v<W, std::uint16_t>;
    std::int64_t skip = 0;
    if constexpr (kInPlace) skip = leadingLanes(w, k);
    const auto kp = paddedDepth(skip + k);
    auto& rows = narrowedRows();
    rows.resize(static_cast<std::size_t>((m + kTileRows - 1) / kTileRows * kTileRows * kp));  // whole tiles
    auto& pool = ThreadPool::shared();
    if (m <= 8)  // a decoding step's rows: fewer conversions than a hand-off to the pool costs
        narrowRows(x, k, skip, kp, rows.data(), 0, m);
    else
        pool.parallelFor(m, 8, [&](std::int64_t begin, std::int64_t end) { narrowRows(x, k, skip, kp, rows.data(), begin, end); });

    const auto sweep = std::max<std::int64_t>(kTileRows, kSweepBytes / (kp * 2) / kTileRows * kTileRows);
    const auto blocks = (n + kTileCols - 1) / kTileCols;
    for (std::int64_t i0 = 0; i0 < m; i0 += sweep) {
        const auto sweepEnd = std::min(m, i0 + sweep);
        const auto grain = std::clamp<std::int64_t>(blocks / (8 * pool.size()), kFewestBlocksPerClaim, kBlocksPerClaim);
        pool.parallelFor(blocks, m <= kStepRows ? kBlocksPerClaim : grain, [&](std::int64_t begin, std::int64_t end) {
            for (std::int64_t block = begin; block < end; ++block) {
                const auto j0 = block * kTileCols;
                const auto cols = std::min<std::int64_t>(kTileCols, n - j0);
                const std::uint16_t* weights = nullptr;
                if constexpr (kInPlace) {
                    weights = lineStart(w + j0 * k, skip);
                } else {
                    auto* widened = widenedBlock(k);
                    widenBlock(w + j0 * k, cols, k, widened);
                    weights = widened;
                }
                // A decoding step's rows (one sweep) request the next block of their claim while they run.
                NextBlock next;
                const auto steps = kp / kDepth;  // 32-deep steps of a tile
                const auto tiles = (sweepEnd - i0 + kTileRows - 1) / kTileRows;
                if constexpr (kInPlace)
                    if (m > kTileRows && m <= kStepRows && kTileCols * k * 2 <= kPrefetchedBlockBytes && block + 1 < end) {
                        next.rows = lineStart(w + (j0 + kTileCols) * k, skip);
                        next.cols = std::min<std::int64_t>(kTileCols, n - j0 - kTileCols);
                        next.rate = (next.cols * steps + tiles * steps - 1) / (tiles * steps);
                    }
                for (std::int64_t i = i0; i < sweepEnd; i += kTileRows) {
                    const auto r = std::min<std::int64_t>(kTileRows, m - i);
                    kTiles[r - 1][cols - 1](rows.data() + i * kp, weights, k, skip, y + i * n + j0, n, next);
                    next.first += next.rate * steps;
                }
            }
        });
    }
    // A long prompt's rows are not kept past the call.
    if (rows.capacity() > (std::size_t{32} << 20)) std::vector<std::uint16_t>().swap(rows);
}

void many(const float* x, const GemvOutput* outputs, std::size_t count, std::int64_t k) {
    // The row narrowed once for each place in a line where the outputs' weights start (usually one).
    const auto stride = kTileRows * paddedDepth(k + kDepth);
    std::vector<std::int64_t> skips;
    std::vector<std::size_t> layout(count);  // output i's narrowed row: layout[i] * stride
    for (std::size_t i = 0; i < count; ++i) {
        const auto skip = leadingLanes(static_cast<const std::uint16_t*>(outputs[i].w), k);
        const auto found = std::find(skips.begin(), skips.end(), skip);
        layout[i] = static_cast<std::size_t>(found - skips.begin());
        if (found == skips.end()) skips.push_back(skip);
    }
    auto& row = narrowedRows();
    row.resize(static_cast<std::size_t>(stride) * skips.size());
    for (std::size_t g = 0; g < skips.size(); ++g)
        narrowRows(x, k, skips[g], paddedDepth(skips[g] + k), row.data() + g * stride, 0, 1);
    std::vector<std::int64_t> firstBlock(count + 1, 0);  // output i's tiles are [firstBlock[i], firstBlock[i + 1])
    for (std::size_t i = 0; i < count; ++i)
        firstBlock[i + 1] = firstBlock[i] + (outputs[i].n + kTileCols - 1) / kTileCols;
    ThreadPool::shared().parallelFor(firstBlock[count], kBlocksPerClaim, [&](std::int64_t begin, std::int64_t end) {
        std::size_t i = static_cast<std::size_t>(std::upper_bound(firstBlock.begin(), firstBlock.end(), begin) - firstBlock.begin()) - 1;
        for (std::int64_t block = begin; block < end; ++block) {
            while (block >= firstBlock[i + 1])
                ++i;
            const auto& o = outputs[i];
            const auto j0 = (block - firstBlock[i]) * kTileCols;
            const auto cols = std::min<std::int64_t>(kTileCols, o.n - j0);
            const auto skip = skips[layout[i]];
            kTiles[0][cols - 1](row.data() + layout[i] * stride, lineStart(static_cast<const std::uint16_t*>(o.w) + j0 * k, skip), k, skip,
                                o.y + j0, o.n, NextBlock{});
        }
    });
}

}  // namespace

bool hasAvx512Bf16() {
    static const bool yes = hasAvx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512bf16");
    return yes;
}

bool bf16DotProducts() {
    static const bool yes = hasAvx512Bf16() && environmentOverrides().bf16Activations && !onednnBf16Ready();
    return yes;
}

void bf16DotMatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    product(x, w, y, m, n, k);
}

void bf16DotEightBitMatmulTransposed(const float* x, const void* w, WeightType type, float* y, std::int64_t m, std::int64_t n,
                                     std::int64_t k) {
    if (type == WeightType::I8)
        product(x, static_cast<const std::int8_t*>(w), y, m, n, k);
    else
        product(x, static_cast<const Fp8E4M3*>(w), y, m, n, k);
}

void bf16DotGemvMany(const float* x, const GemvOutput* outputs, std::size_t count, std::int64_t k) {
    many(x, outputs, count, k);
}

}  // namespace dragoman::kernels
