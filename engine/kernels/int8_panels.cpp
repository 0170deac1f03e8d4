#include "kernels/int8_panels.h"

#include "kernels/channel_epilogue.h"
#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

// The epilogue's multiplies and adds round separately, as scaleAndBiasRows() does (C++ keeps -ffp-contract=fast, which
// would fuse them here).
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

namespace dragoman::kernels {
namespace {

#define DRAGOMAN_PANELS_VNNI __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512vnni")))

constexpr std::int64_t kDepthGroup = 4;                            // codes of a row that one vpdpbusd lane takes
constexpr std::int64_t kGroupBytes = kPanelColumns * kDepthGroup;  // one depth group of a panel: four vectors
constexpr int kRowsPerTile = 6;                                    // 6 rows x 4 vectors: 24 accumulators of 32 registers

std::int64_t depthGroups(std::int64_t k) {
    return (k + kDepthGroup - 1) / kDepthGroup;
}

// rows[i] holds 16 dwords of weight row i; afterwards rows[t] holds dword t of each of the 16 rows, in row order.
DRAGOMAN_PANELS_VNNI inline void transpose16(__m512i (&rows)[16]) {
    __m512i a[16];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        a[2 * i] = _mm512_maskz_unpacklo_epi32(kAll16, rows[2 * i], rows[2 * i + 1]);
        a[2 * i + 1] = _mm512_maskz_unpackhi_epi32(kAll16, rows[2 * i], rows[2 * i + 1]);
    }
    // c[4 j + m], 128-bit lane L: dword 4 L + m of rows 4 j .. 4 j + 3.
    __m512i c[16];
#pragma GCC unroll 4
    for (int j = 0; j < 4; ++j) {
        c[4 * j + 0] = _mm512_maskz_unpacklo_epi64(0xFF, a[4 * j], a[4 * j + 2]);
        c[4 * j + 1] = _mm512_maskz_unpackhi_epi64(0xFF, a[4 * j], a[4 * j + 2]);
        c[4 * j + 2] = _mm512_maskz_unpacklo_epi64(0xFF, a[4 * j + 1], a[4 * j + 3]);
        c[4 * j + 3] = _mm512_maskz_unpackhi_epi64(0xFF, a[4 * j + 1], a[4 * j + 3]);
    }
    // Dword 4 L + m of all 16 rows: lane L of c[m], c[4 + m], c[8 + m], c[12 + m].
#pragma GCC unroll 4
    for (int m = 0; m < 4; ++m) {
        const __m512i e0 = _mm512_maskz_shuffle_i32x4(kAll16, c[m], c[4 + m], 0x44);
        const __m512i e1 = _mm512_maskz_shuffle_i32x4(kAll16, c[m], c[4 + m], 0xEE);
        const __m512i e2 = _mm512_maskz_shuffle_i32x4(kAll16, c[8 + m], c[12 + m], 0x44);
        const __m512i e3 = _mm512_maskz_shuffle_i32x4(kAll16, c[8 + m], c[12 + m], 0xEE);
        rows[0 + m] = _mm512_maskz_shuffle_i32x4(kAll16, e0, e2, 0x88);
        rows[4 + m] = _mm512_maskz_shuffle_i32x4(kAll16, e0, e2, 0xDD);
        rows[8 + m] = _mm512_maskz_shuffle_i32x4(kAll16, e1, e3, 0x88);
        rows[12 + m] = _mm512_maskz_shuffle_i32x4(kAll16, e1, e3, 0xDD);
    }
}

// Codes offset to unsigned (vpdpbusd's first operand); the offset's share is taken back through each row's code sum.
DRAGOMAN_PANELS_VNNI void packPanelVnni(const std::int8_t* w, std::int64_t k, std::int64_t first, std::int64_t columns,
                                        std::uint8_t* panel) {
    const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
    const std::int64_t groups = depthGroups(k);
    for (std::int64_t q = 0; q < kPanelColumns / 16; ++q) {
        for (std::int64_t depth = 0; depth < k; depth += 64) {
            const std::int64_t left = k - depth;
            const __mmask64 lanes = left >= 64 ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
            __m512i rows[16];
#pragma GCC unroll 16
            for (int i = 0; i < 16; ++i) {
                const std::int64_t column = q * 16 + i;
                rows[i] = column < columns ? _mm512_maskz_loadu_epi8(lanes, w + (first + column) * k + depth) : _mm512_setzero_si512();
            }
            transpose16(rows);
            for (std::int64_t t = 0; t < 16 && depth / kDepthGroup + t < groups; ++t)
                _mm512_store_si512(panel + (depth / kDepthGroup + t) * kGroupBytes + q * 64, _mm512_xor_si512(rows[t], offset));
        }
    }
}

// R rows from r0 against a panel's 64 columns: per depth group, four weight vectors and one broadcast of each row's
// four codes.
// The channel epilogue of a panel's columns: pointers at its first column (the scale's one value where per tensor).
struct PanelEpilogue {
    const float* scale = nullptr;
    bool perTensor = false;
    const float* bias = nullptr;
};

// `ahead` (or null): a panel fetched into L2 meanwhile, one depth group's four lines per group.
template <int R>
DRAGOMAN_PANELS_VNNI void panelTile(const QuantizedRows& x, std::int64_t r0, const std::uint8_t* panel, std::int64_t groups,
                                    std::int64_t columns, float* y, std::int64_t ldy, const PanelEpilogue& e, const std::uint8_t* ahead,
                                    const char* side, std::int64_t sideLines) {
    __m512i acc[R][4];
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q)
            acc[r][q] = _mm512_setzero_si512();
    const std::int8_t* codes = x.codes + r0 * x.stride;
    for (std::int64_t d = 0; d < groups; ++d) {
        const std::uint8_t* group = panel + d * kGroupBytes;
        if (ahead) {
#pragma GCC unroll 4
            for (int q = 0; q < 4; ++q)
                _mm_prefetch(reinterpret_cast<const char*>(ahead + d * kGroupBytes + q * 64), _MM_HINT_T1);
            if (d < sideLines) _mm_prefetch(side + d * 64, _MM_HINT_T1);
        }
        __m512i weights[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q)
            weights[q] = _mm512_load_si512(group + q * 64);
#pragma GCC unroll 6
        for (int r = 0; r < R; ++r) {
            std::int32_t four;
            std::memcpy(&four, codes + r * x.stride + d * kDepthGroup, sizeof four);
            const __m512i broadcast = _mm512_set1_epi32(four);
#pragma GCC unroll 4
            for (int q = 0; q < 4; ++q)
                acc[r][q] = _mm512_dpbusd_epi32(acc[r][q], weights[q], broadcast);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; ++r) {
        const __m512i taken = _mm512_set1_epi32(x.sums[r0 + r] << 7);
        const __m512 scale = _mm512_set1_ps(x.scales[r0 + r]);
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
            const auto lanes = firstLanes16(columns - q * 16);
            if (lanes == 0) break;
            __m512 value = _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAll16, _mm512_sub_epi32(acc[r][q], taken)), scale);
            if (e.scale)
                value = _mm512_mul_ps(value, e.perTensor ? _mm512_set1_ps(*e.scale) : _mm512_maskz_loadu_ps(lanes, e.scale + q * 16));
            if (e.bias) value = _mm512_add_ps(value, _mm512_maskz_loadu_ps(lanes, e.bias + q * 16));
            _mm512_mask_storeu_ps(y + r * ldy + q * 16, lanes, value);
        }
    }
}

// The rows in as few tiles as there must be (six rows at most), as even as they come: eight rows as four and four,
// not six and a two-row tile that loads the panel's four vectors for every two broadcasts.
DRAGOMAN_PANELS_VNNI void panelProductsVnni(const QuantizedRows& x, std::int64_t m, const std::uint8_t* panel, std::int64_t k,
                                            std::int64_t columns, float* y, std::int64_t ldy, const PanelEpilogue& e,
                                            const std::uint8_t* ahead, const char* side, std::int64_t sideLines) {
    using Tile = void (*)(const QuantizedRows&, std::int64_t, const std::uint8_t*, std::int64_t, std::int64_t, float*, std::int64_t,
                          const PanelEpilogue&, const std::uint8_t*, const char*, std::int64_t);
    static constexpr Tile kTiles[kRowsPerTile + 1] = {nullptr,      panelTile<1>, panelTile<2>, panelTile<3>,
                                                      panelTile<4>, panelTile<5>, panelTile<6>};
    const std::int64_t groups = depthGroups(k);
    const std::int64_t tiles = (m + kRowsPerTile - 1) / kRowsPerTile;
    for (std::int64_t t = 0, r = 0; t < tiles; ++t, ahead = nullptr) {
        const std::int64_t rows = (m - r + tiles - t - 1) / (tiles - t);  // the rest's share, rounded up
        // The first tile alone fetches `ahead` and the side lines (a tile fetches those only with `ahead`).
        kTiles[rows](x, r, panel, groups, columns, y + r * ldy, ldy, e, ahead, side, sideLines);
        r += rows;
    }
}

}  // namespace

std::int64_t panelBytes(std::int64_t k) {
    return depthGroups(k) * kGroupBytes;
}

namespace {

std::atomic<bool> panelsEnabled{true};

bool vnniCpu() {
    static const bool yes = hasAvx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
    return yes;
}

// `rounds` x 12 independent vpdpbusd (64 multiply-adds each): as many accumulators as hide the instruction's latency.
DRAGOMAN_PANELS_VNNI std::int32_t vnniLoop(std::int64_t rounds) {
    __m512i acc[12];
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i)
        acc[i] = _mm512_set1_epi32(i);
    __m512i a = _mm512_set1_epi32(0x01020304);
    const __m512i b = _mm512_set1_epi32(0x05060708);
    for (std::int64_t r = 0; r < rounds; ++r) {
#pragma GCC unroll 12
        for (int i = 0; i < 12; ++i)
            acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
        __asm__ volatile("" : "+v"(a));  // a is not known to stay the same: every round is computed
    }
    std::int32_t lanes[16], sum = 0;
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) {
        _mm512_storeu_si512(lanes, acc[i]);
        sum += lanes[0];
    }
    return sum;
}

}  // namespace

bool panelProductsAvailable() {
    return vnniCpu() && panelsEnabled.load(std::memory_order_relaxed);
}

void setPanelProducts(bool enabled) {
    panelsEnabled.store(enabled, std::memory_order_relaxed);
}

double vnniPeakMacsPerSecond(double seconds) {
    if (!vnniCpu()) return 0;
    auto& pool = ThreadPool::shared();
    const auto threads = static_cast<std::int64_t>(pool.size());
    // Rounds for about `seconds` at 3 GHz, one vpdpbusd per cycle (the probe measures whatever the CPU does).
    const auto rounds = static_cast<std::int64_t>(seconds * 3e9 / 12);
    std::vector<std::int32_t> sums(static_cast<std::size_t>(threads));
    double best = 0;
    for (int pass = 0; pass < 3; ++pass) {
        const auto start = std::chrono::steady_clock::now();
        pool.parallelFor(threads, 1, [&](std::int64_t begin, std::int64_t end) {
            for (auto t = begin; t < end; ++t)
                sums[static_cast<std::size_t>(t)] += vnniLoop(rounds);
        });
        const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = std::max(best, static_cast<double>(threads * rounds * 12 * 64) / elapsed);
    }
    return best;
}

void packPanel(const std::int8_t* w, std::int64_t k, std::int64_t first, std::int64_t columns, std::uint8_t* panel) {
    packPanelVnni(w, k, first, columns, panel);
}

void panelProducts(const QuantizedRows& x, std::int64_t m, const std::uint8_t* panel, std::int64_t k, std::int64_t columns, float* y,
                   std::int64_t ldy, const ChannelEpilogue* epilogue, std::int64_t first, const std::uint8_t* ahead) {
    PanelEpilogue e;
    if (epilogue) {
        e.perTensor = epilogue->scalePerTensor;
        e.scale = epilogue->scale ? epilogue->scale + (e.perTensor ? 0 : first) : nullptr;
        e.bias = epilogue->bias ? epilogue->bias + first : nullptr;
    }
    // The feed's lines go with the next panel's, a line per depth group of the first tile.
    const auto [side, lines] = ahead ? threadLineFeed().take(depthGroups(k)) : std::pair<const char*, std::int64_t>{nullptr, 0};
    panelProductsVnni(x, m, panel, k, columns, y, ldy, e, ahead, side, lines);
}

void LineFeed::reset() {
    ranges_.clear();
    next_ = 0;
}

void LineFeed::add(const void* data, std::size_t bytes) {
    const auto* start = static_cast<const char*>(data);
    if (bytes > 0) ranges_.emplace_back(start, start + bytes);
}

std::pair<const char*, std::int64_t> LineFeed::take(std::int64_t lines) {
    if (next_ >= ranges_.size() || lines <= 0) return {nullptr, 0};
    auto& [start, end] = ranges_[next_];
    const auto available = (end - start + 63) / 64;
    const auto n = std::min<std::int64_t>(lines, available);
    const char* run = start;
    start += n * 64;
    if (start >= end) ++next_;
    return {run, n};
}

LineFeed& threadLineFeed() {
    thread_local LineFeed feed;
    return feed;
}

void Int8Panels::Free::operator()(std::uint8_t* p) const {
    std::free(p);
}

Int8Panels::Int8Panels(const std::int8_t* w, std::int64_t n, std::int64_t k) : n_(n), k_(k) {
    const std::int64_t panels = (n + kPanelColumns - 1) / kPanelColumns;
    // In 2 MB pages where the kernel gives them: a small model's panels (24 MB) in 4 KB pages took 6,000 page faults,
    // as long as laying them out.
    constexpr std::size_t kHugePage = std::size_t{2} << 20;
    const auto size = static_cast<std::size_t>(panels * panelBytes(k));
    const bool huge = size >= kHugePage;
    const auto rounded = huge ? (size + kHugePage - 1) / kHugePage * kHugePage : std::max<std::size_t>(size, 64);
    auto* bytes = static_cast<std::uint8_t*>(std::aligned_alloc(huge ? kHugePage : 64, rounded));
    if (!bytes) throw std::bad_alloc();
    if (huge) madvise(bytes, rounded, MADV_HUGEPAGE);  // advice: without it (or refused) the pages are small
    bytes_.reset(bytes);
    ThreadPool::shared().parallelFor(panels, 1, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t p = begin; p < end; ++p)
            packPanel(w, k, p * kPanelColumns, std::min(kPanelColumns, n - p * kPanelColumns), bytes_.get() + p * panelBytes(k));
    });
}

}  // namespace dragoman::kernels

#pragma GCC pop_options
