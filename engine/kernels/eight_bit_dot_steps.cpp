#include "kernels/eight_bit_dot_steps.h"

#include "kernels/bf16.h"
#include "kernels/bf16_dot_gemm.h"
#include "kernels/int8_digit_steps.h"
#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
#include <bit>
#include <type_traits>
#include <vector>

namespace dragoman::kernels {
// Named inside the anonymous namespace: a unity build puts this file beside bf16_dot_gemm.cpp, whose helpers share
// names with these (tile, paddedDepth).
namespace {
namespace eightbit {

#define DRAGOMAN_VBMI_BF16 __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512bf16,avx512vbmi")))

constexpr std::int64_t kBlock = 64;      // codes per step: one 64-byte load, two vdpbf16ps per activation row
constexpr std::int64_t kRowBlock = 128;  // weight rows a thread claims at a time (64 measured 0.95x)

// The bf16 value of each E4M3 magnitude (a code's low 7 bits) split into its high and low bytes: the tables the byte
// lookups index. The sign, bit 7 of the code, goes straight to the high byte. Built from widen(), so every code reads
// as the float32 kernels read it.
struct Tables {
    std::array<std::uint8_t, 128> high{}, low{};
    Tables() {
        for (int magnitude = 0; magnitude < 128; ++magnitude) {
            const auto value = widen(Fp8E4M3{static_cast<std::uint8_t>(magnitude)});  // exact (the scalar widen, not load16)
            const auto bits = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(value) >> 16);
            high[static_cast<std::size_t>(magnitude)] = static_cast<std::uint8_t>(bits >> 8);
            low[static_cast<std::size_t>(magnitude)] = static_cast<std::uint8_t>(bits & 0xFF);
        }
    }
};

// 64 codes -> the high and low bytes of their bf16 values: a magnitude's bytes from the tables, the sign bit put back.
DRAGOMAN_VBMI_BF16 inline void valueBytes(__m512i codes, const __m512i (&table)[4], __m512i sign, __m512i& high, __m512i& low) {
    high = _mm512_ternarylogic_epi32(_mm512_permutex2var_epi8(table[0], codes, table[1]), codes, sign, 0xF8);
    low = _mm512_permutex2var_epi8(table[2], codes, table[3]);
}

// Activation row block [64] -> the two bf16 vectors the widened codes pair with. The interleaves below put codes
// {0-7, 16-23, 32-39, 48-55} of a block in the first vector and {8-15, 24-31, 40-47, 56-63} in the second, so the
// activations are laid out alike, once per call.
DRAGOMAN_VBMI_BF16 void narrowRow(const float* x, std::int64_t k, std::uint16_t* out) {
    static constexpr std::array<std::uint16_t, 32> kFirst = [] {
        std::array<std::uint16_t, 32> idx{};
        for (int e = 0; e < 32; ++e)
            idx[static_cast<std::size_t>(e)] = static_cast<std::uint16_t>(16 * (e / 8) + e % 8);
        return idx;
    }();
    static constexpr std::array<std::uint16_t, 32> kSecond = [] {
        std::array<std::uint16_t, 32> idx{};
        for (int e = 0; e < 32; ++e)
            idx[static_cast<std::size_t>(e)] = static_cast<std::uint16_t>(16 * (e / 8) + 8 + e % 8);
        return idx;
    }();
    const __m512i first = _mm512_loadu_si512(kFirst.data()), second = _mm512_loadu_si512(kSecond.data());
    for (std::int64_t d = 0; d < k; d += kBlock) {
        const std::int64_t left = k - d;
        __m512 part[4];
        for (int q = 0; q < 4; ++q)
            part[q] = _mm512_maskz_loadu_ps(firstLanes16(left - 16 * q), x + d + 16 * q);
        const __m512i a = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(part[1], part[0]));  // values 0-31
        const __m512i b = reinterpret_cast<__m512i>(_mm512_cvtne2ps_pbh(part[3], part[2]));  // values 32-63
        _mm512_storeu_si512(out + d, _mm512_permutex2var_epi16(a, first, b));
        _mm512_storeu_si512(out + d + 32, _mm512_permutex2var_epi16(a, second, b));
    }
}

// One 64-code step at depth d of R activation rows against C weight rows (codes past `mask` read as zero, which is +0:
// with the zero activations past K they add nothing). The same depth of the next C rows is requested into L1 meanwhile
// (past the matrix's last row too: a prefetch never faults): the widening costs enough instructions per line that the
// core alone keeps too few loads in flight, so the next rows' lines are asked for while these are summed (into L2
// measured 0.8x the speed of L1 here). Every step prefetches, the first (masked) one too: left out there, each tile
// began with a demand miss on every row.
template <int R, int C>
DRAGOMAN_VBMI_BF16 inline __attribute__((always_inline)) void step(__m512 (&acc)[R][C], const std::uint16_t* x, std::int64_t kp,
                                                                   const std::uint8_t* rows, std::int64_t k, std::int64_t d, __mmask64 mask,
                                                                   const __m512i (&table)[4], __m512i sign) {
    __m512bh x0[R], x1[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
        x0[r] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(x + r * kp + d));
        x1[r] = reinterpret_cast<__m512bh>(_mm512_loadu_si512(x + r * kp + d + 32));
    }
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
        _mm_prefetch(reinterpret_cast<const char*>(rows + (C + c) * k + d), _MM_HINT_T0);
        const __m512i codes = _mm512_maskz_loadu_epi8(mask, rows + c * k + d);
        __m512i high, low;
        valueBytes(codes, table, sign, high, low);
        const auto w0 = reinterpret_cast<__m512bh>(_mm512_unpacklo_epi8(low, high));
        const auto w1 = reinterpret_cast<__m512bh>(_mm512_unpackhi_epi8(low, high));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            acc[r][c] = _mm512_dpbf16_ps(acc[r][c], x0[r], w0);
            acc[r][c] = _mm512_dpbf16_ps(acc[r][c], x1[r], w1);
        }
    }
}

// R activation rows (narrowed()'s layout, kp values apart) against C consecutive weight rows from row j: R x C
// accumulators, each weight row's 64 codes widened once for all R rows. The rows are read from the line where they
// start, the `skip` codes before them masked off (leadingBytes). Two whole steps per turn of the loop, then a last
// partial step: a decoding step streams these weights from memory, and the loads
// in flight are bounded by the instructions between them (8 rows against the 1.8B's matrices: 42 -> 50 GB/s for FP8
// codes, 2 threads, Zen 5, with the prefetch into L1 and claims of 128 rows).
template <int R, int C>
DRAGOMAN_VBMI_BF16 void tile(const std::uint16_t* x, std::int64_t kp, const std::uint8_t* w, std::int64_t k, std::int64_t skip, float* y,
                             std::int64_t ldy, std::int64_t j) {
    static const Tables t;
    const __m512i table[4] = {_mm512_loadu_si512(t.high.data()), _mm512_loadu_si512(t.high.data() + 64), _mm512_loadu_si512(t.low.data()),
                              _mm512_loadu_si512(t.low.data() + 64)};
    const __m512i sign = _mm512_set1_epi8(static_cast<char>(0x80));
    __m512 acc[R][C];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c)
            acc[r][c] = _mm512_setzero_ps();
    const std::uint8_t* rows = w + j * k - skip;  // from the line where they start (leadingBytes)
    const std::int64_t depth = skip + k;
    constexpr __mmask64 kAll = ~__mmask64{0};
    std::int64_t d = 0;
    if (skip > 0) {
        step<R, C>(acc, x, kp, rows, k, 0, kAll << skip, table, sign);
        d = kBlock;
    }
    for (; d + 2 * kBlock <= depth; d += 2 * kBlock) {
        step<R, C>(acc, x, kp, rows, k, d, kAll, table, sign);
        step<R, C>(acc, x, kp, rows, k, d + kBlock, kAll, table, sign);
    }
    for (; d < depth; d += kBlock) {
        const std::int64_t left = depth - d;
        step<R, C>(acc, x, kp, rows, k, d, left >= kBlock ? kAll : (__mmask64{1} << left) - 1, table, sign);
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
        for (int c = 0; c < C; ++c)
            y[r * ldy + j + c] = sum16(acc[r][c]);
}

// R rows against weight rows [begin, end) of one matrix: C rows per tile as registers allow, the rest one at a time.
// A decoding step's one row takes 4 weight rows per tile (with their 4 prefetched: 8 measured 0.92x, 3 level).
template <int R>
void rowsAgainst(const std::uint16_t* x, std::int64_t kp, const std::uint8_t* w, std::int64_t k, std::int64_t skip, float* y,
                 std::int64_t ldy, std::int64_t begin, std::int64_t end) {
    constexpr int C = R == 1 ? 4 : R == 2 ? 6 : R == 3 ? 4 : 3;
    std::int64_t j = begin;
    for (; j + C <= end; j += C)
        tile<R, C>(x, kp, w, k, skip, y, ldy, j);
    for (; j < end; ++j)
        tile<R, 1>(x, kp, w, k, skip, y, ldy, j);
}

// Every row of x (m rows) against weight rows [begin, end), four activation rows at a time.
void block(const std::uint16_t* x, std::int64_t m, std::int64_t kp, const std::uint8_t* w, std::int64_t k, std::int64_t skip, float* y,
           std::int64_t ldy, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = 0; r < m; r += 4) {
        const auto* xr = x + r * kp;
        float* yr = y + r * ldy;
        switch (std::min<std::int64_t>(4, m - r)) {
            case 4:
                rowsAgainst<4>(xr, kp, w, k, skip, yr, ldy, begin, end);
                break;
            case 3:
                rowsAgainst<3>(xr, kp, w, k, skip, yr, ldy, begin, end);
                break;
            case 2:
                rowsAgainst<2>(xr, kp, w, k, skip, yr, ldy, begin, end);
                break;
            default:
                rowsAgainst<1>(xr, kp, w, k, skip, yr, ldy, begin, end);
                break;
        }
    }
}

std::int64_t paddedDepth(std::int64_t k) {
    return (k + kBlock - 1) / kBlock * kBlock;
}

// Codes are read from the 64-byte line where the rows start: a checkpoint's tensors start wherever its header ends
// (safetensors aligns them to 8 bytes), and 64-byte loads across two lines streamed FP8 codes at 32-34 GB/s where
// the same codes from line starts ran at 50 (the 1.8B's matrices, 2 threads, Zen 5). When every row starts at the
// same place in a line (K a multiple of 64), rows are read from that line's start, the `skip` codes before them
// masked off, and the activations are laid out `skip` lanes later to meet them; otherwise from where they start.
std::int64_t leadingBytes(const void* w, std::int64_t k) {
    if (k % kBlock != 0) return 0;
    return static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(w) % 64);
}

// The rows narrowed into per-thread scratch (reused between calls: fresh pages are zeroed by the kernel), each `skip`
// zeros and then its K values; `slot` keeps several layouts of one row apart (GemvMany's outputs).
const std::uint16_t* narrowed(const float* x, std::int64_t m, std::int64_t k, std::int64_t skip, std::size_t slot = 0) {
    thread_local std::vector<std::vector<std::uint16_t>> layouts;
    thread_local std::vector<float> shifted;
    if (layouts.size() <= slot) layouts.resize(slot + 1);
    auto& rows = layouts[slot];
    const auto kp = paddedDepth(skip + k);
    rows.resize(static_cast<std::size_t>(m * kp));
    shifted.assign(static_cast<std::size_t>(skip + k), 0.0f);
    for (std::int64_t r = 0; r < m; ++r) {
        std::copy_n(x + r * k, k, shifted.begin() + skip);
        narrowRow(shifted.data(), skip + k, rows.data() + r * kp);
    }
    return rows.data();
}

// A row (or M rows) laid out for one output's codes: bf16 lanes for the FP8 byte tables, digit planes for int8.
struct Layout {
    WeightType type = WeightType::FP8;
    std::int64_t skip = 0;
    const std::uint16_t* narrowed = nullptr;
    Int8DigitRows digits;
};

Layout layoutFor(WeightType type, const float* x, std::int64_t m, std::int64_t k, std::int64_t skip, std::size_t slot = 0) {
    Layout layout{type, skip, nullptr, {}};
    if (type == WeightType::I8)
        layout.digits = int8DigitRows(x, m, k, skip, slot);
    else
        layout.narrowed = narrowed(x, m, k, skip, slot);
    return layout;
}

void blockOf(const Layout& x, std::int64_t m, const void* w, std::int64_t k, float* y, std::int64_t ldy, std::int64_t begin,
             std::int64_t end) {
    if (x.type == WeightType::I8)
        int8DigitBlock(x.digits, m, static_cast<const std::int8_t*>(w), k, x.skip, y, ldy, begin, end);
    else
        block(x.narrowed, m, paddedDepth(x.skip + k), static_cast<const std::uint8_t*>(w), k, x.skip, y, ldy, begin, end);
}

}  // namespace eightbit
}  // namespace

bool eightBitDotSteps() {
    static const bool yes = bf16DotProducts() && __builtin_cpu_supports("avx512vbmi") && int8DigitSteps();
    return yes;
}

void eightBitDotStepsMatmulTransposed(const float* x, const void* w, WeightType type, float* y, std::int64_t m, std::int64_t n,
                                      std::int64_t k) {
    const auto layout = eightbit::layoutFor(type, x, m, k, eightbit::leadingBytes(w, k));
    ThreadPool::shared().parallelFor(n, eightbit::kRowBlock,
                                     [&](std::int64_t begin, std::int64_t end) { eightbit::blockOf(layout, m, w, k, y, n, begin, end); });
}

void eightBitDotStepsGemvMany(const float* x, const GemvOutput* outputs, std::size_t count, std::int64_t k) {
    // The row laid out once for each type of codes and place in a line where they start (usually one).
    std::vector<eightbit::Layout> layouts(count);
    for (std::size_t i = 0; i < count; ++i) {
        const auto skip = eightbit::leadingBytes(outputs[i].w, k);
        const auto same = std::find_if(layouts.begin(), layouts.begin() + static_cast<std::ptrdiff_t>(i),
                                       [&](const eightbit::Layout& l) { return l.type == outputs[i].type && l.skip == skip; });
        layouts[i] =
            same != layouts.begin() + static_cast<std::ptrdiff_t>(i) ? *same : eightbit::layoutFor(outputs[i].type, x, 1, k, skip, i);
    }
    ThreadPool::shared().parallelFor(rowsOfOutputs(outputs, count), eightbit::kRowBlock, [&](std::int64_t begin, std::int64_t end) {
        forRowsOfOutputs(outputs, count, begin, end, [&](const GemvOutput& o, std::int64_t from, std::int64_t to) {
            eightbit::blockOf(layouts[static_cast<std::size_t>(&o - outputs)], 1, o.w, k, o.y, o.n, from, to);
        });
    });
}

}  // namespace dragoman::kernels
