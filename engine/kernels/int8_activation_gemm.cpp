#include "kernels/int8_activation_gemm.h"

#include "kernels/channel_epilogue.h"
#include "kernels/int8_panels.h"
#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <vector>

namespace dragoman::kernels {
namespace {
namespace w8a8 {

#define DRAGOMAN_W8A8_VNNI __attribute__((target("avx2,fma,avx512f,avx512vl,avx512bw,avx512vnni")))
#define DRAGOMAN_W8A8_AVX2 __attribute__((target("avx2,fma")))

constexpr std::int64_t kStep = 64;      // codes per vpdpbusd
constexpr std::int64_t kRowBlock = 64;  // weight rows a thread claims at a time
constexpr float kHalfRange = 127.5f;    // compressed-tensors: max|x| / ((127 - (-128)) / 2)
constexpr __mmask64 kAllCodes = ~__mmask64{0};

enum class Isa { Vnni, Avx2, Portable };

Isa isa() {
    static const Isa chosen = hasAvx512() && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni") ? Isa::Vnni
                              : hasAvx2()                                                                               ? Isa::Avx2
                                                                                                                        : Isa::Portable;
    return chosen;
}

// The row's scale from its largest magnitude; NaN where a value is not finite.
float scaleOf(float largest, bool finite) {
    if (!finite) return std::nanf("");
    return std::max(largest / kHalfRange, FLT_EPSILON);
}

std::int8_t codeOf(float value, float scale) {
    const float q = std::nearbyint(value / scale);  // half to even, as torch.round
    return static_cast<std::int8_t>(std::clamp(q, -128.0f, 127.0f));
}

float quantizePortable(const float* x, std::int64_t k, std::int8_t* codes) {
    float largest = 0.0f;
    bool finite = true;
    for (std::int64_t i = 0; i < k; ++i) {
        finite = finite && std::isfinite(x[i]);
        largest = std::max(largest, std::fabs(x[i]));
    }
    const float scale = scaleOf(largest, finite);
    for (std::int64_t i = 0; i < k; ++i)
        codes[i] = finite ? codeOf(x[i], scale) : 0;
    return scale;
}

// The same numbers, 16 lanes at a time: the division and the rounding (nearest even) are IEEE's in both.
DRAGOMAN_W8A8_VNNI float quantizeAvx512(const float* x, std::int64_t k, std::int8_t* codes, std::int32_t& sum) {
    __m512 largest = _mm512_setzero_ps(), poison = _mm512_setzero_ps();  // poison: x * 0 is NaN for a NaN or infinity
    for (std::int64_t i = 0; i < k; i += 16) {
        const __m512 v = _mm512_maskz_loadu_ps(firstLanes16(k - i), x + i);
        largest = _mm512_maskz_max_ps(kAll16, largest, _mm512_abs_ps(v));
        poison = _mm512_fmadd_ps(v, _mm512_setzero_ps(), poison);
    }
    const float poisoned = sum16(poison);
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, largest);
    const float scale = scaleOf(*std::max_element(lanes, lanes + 16), poisoned == poisoned);
    sum = 0;
    if (scale != scale) {
        std::fill_n(codes, k, std::int8_t{0});
        return scale;
    }
    const __m512 divisor = _mm512_set1_ps(scale);
    const __m512i low = _mm512_set1_epi32(-128), high = _mm512_set1_epi32(127);
    __m512i total = _mm512_setzero_si512();
    for (std::int64_t i = 0; i < k; i += 16) {
        const auto lanes = firstLanes16(k - i);
        const __m512i q = _mm512_maskz_min_epi32(
            kAll16,
            _mm512_maskz_max_epi32(kAll16, _mm512_maskz_cvtps_epi32(lanes, _mm512_div_ps(_mm512_maskz_loadu_ps(lanes, x + i), divisor)),
                                   low),
            high);
        total = _mm512_add_epi32(total, q);
        _mm512_mask_cvtepi32_storeu_epi8(codes + i, lanes, q);
    }
    alignas(64) std::int32_t sums[16];
    _mm512_store_si512(sums, total);
    for (const auto lane : sums)
        sum += lane;
    return scale;
}

// AVX2: the same numbers straight into 16-bit codes (what the AVX2 products read); no code sums (no offset to take
// back there).
DRAGOMAN_W8A8_AVX2 float quantizeAvx2(const float* x, std::int64_t k, std::int16_t* wide) {
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF));
    __m256 largest = _mm256_setzero_ps(), poison = _mm256_setzero_ps();
    const std::int64_t full = k / 8 * 8;
    for (std::int64_t i = 0; i < full; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        largest = _mm256_max_ps(largest, _mm256_and_ps(v, magnitude));
        poison = _mm256_fmadd_ps(v, _mm256_setzero_ps(), poison);
    }
    alignas(32) float lanes[8], poisons[8];
    _mm256_store_ps(lanes, largest);
    _mm256_store_ps(poisons, poison);
    float top = *std::max_element(lanes, lanes + 8);
    bool finite = std::all_of(poisons, poisons + 8, [](float p) { return p == p; });
    for (std::int64_t i = full; i < k; ++i) {
        finite = finite && std::isfinite(x[i]);
        top = std::max(top, std::fabs(x[i]));
    }
    const float scale = scaleOf(top, finite);
    if (scale != scale) {
        std::fill_n(wide, k, std::int16_t{0});
        return scale;
    }
    const __m256 divisor = _mm256_set1_ps(scale);
    const __m256i low = _mm256_set1_epi32(-128), high = _mm256_set1_epi32(127);
    for (std::int64_t i = 0; i < full; i += 8) {
        const __m256i q = _mm256_min_epi32(_mm256_max_epi32(_mm256_cvtps_epi32(_mm256_div_ps(_mm256_loadu_ps(x + i), divisor)), low), high);
        const __m128i packed = _mm_packs_epi32(_mm256_castsi256_si128(q), _mm256_extracti128_si256(q, 1));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(wide + i), packed);
    }
    for (std::int64_t i = full; i < k; ++i)
        wide[i] = codeOf(x[i], scale);
    return scale;
}

// M rows quantized into per-thread scratch: row r's codes at codes[r kp + skip + i] (zeros before and after), its
// scale and the sum of its codes.
struct Rows {
    const std::int8_t* codes = nullptr;
    std::int64_t kp = 0, skip = 0;
    const float* scale = nullptr;
    const std::int32_t* sums = nullptr;
    const std::int16_t* wide = nullptr;  // AVX2: the codes widened to 16 bits once, at wide[r kp + i]
};

// The AVX2 products read 16-bit codes only; VNNI and the portable loops read 8-bit codes (VNNI also the code sums).
Rows quantizeRows(const float* x, std::int64_t m, std::int64_t k, std::int64_t skip, Isa isa) {
    thread_local std::vector<std::int16_t> wide;
    thread_local std::vector<std::int8_t> codes;
    thread_local std::vector<float> scales;
    thread_local std::vector<std::int32_t> sums;
    const auto kp = (skip + k + kStep - 1) / kStep * kStep;
    scales.resize(static_cast<std::size_t>(m));
    sums.assign(static_cast<std::size_t>(m), 0);
    std::int8_t* rows = nullptr;
    if (isa == Isa::Avx2) {
        wide.resize(static_cast<std::size_t>(m * kp));
    } else {
        codes.resize(static_cast<std::size_t>(m * kp + 64));  // from a 64-byte line: each step loads whole lines
        rows = codes.data() + (64 - reinterpret_cast<std::uintptr_t>(codes.data()) % 64) % 64;
    }
    // The caller's buffers, by address: a thread_local named in the lambda would be the worker's own.
    float* const rowScales = scales.data();
    std::int32_t* const rowSums = sums.data();
    std::int16_t* const wideRows = wide.data();
    const auto quantize = [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end; ++r) {
            auto& scale = rowScales[r];
            if (isa == Isa::Avx2) {
                scale = quantizeAvx2(x + r * k, k, wideRows + r * kp);
                continue;
            }
            // Zeros before and after the row's codes, which every step reads whole.
            auto* line = rows + r * kp;
            std::fill(line, line + skip, std::int8_t{0});
            std::fill(line + skip + k, line + kp, std::int8_t{0});
            auto& sum = rowSums[r];
            if (isa == Isa::Vnni) {
                scale = quantizeAvx512(x + r * k, k, line + skip, sum);
            } else {
                scale = quantizePortable(x + r * k, k, line + skip);
                for (std::int64_t i = 0; i < k; ++i)
                    sum += line[skip + i];
            }
        }
    };
    ThreadPool::shared().parallelFor(m, ThreadPool::rowsPerClaim(k), quantize);
    if (isa == Isa::Avx2) return {nullptr, kp, 0, rowScales, rowSums, wideRows};
    return {rows, kp, skip, rowScales, rowSums, nullptr};
}

// The integer sum rounded to float32, times the row's scale, as the vector epilogue computes it.
float output(std::int64_t total, float scale) {
    return static_cast<float>(total) * scale;
}

// One 64-code step at depth d of R rows against C weight rows (codes past `mask` read as zero; the activations there
// are zero too). The weights' codes, offset to unsigned, meet the rows' codes in one vpdpbusd; the offset's share is
// taken back through each row's code sum. The next C rows' same depth is requested into L1 meanwhile (as in
// int8_digit_steps.cpp: without it these loads stream at two thirds the rate).
template <int R, int C>
DRAGOMAN_W8A8_VNNI inline __attribute__((always_inline)) void step(__m512i (&acc)[R][C], const std::int8_t* x, std::int64_t kp,
                                                                   const std::uint8_t* rows, std::int64_t k, std::int64_t d,
                                                                   __mmask64 mask) {
    const __m512i offset = _mm512_set1_epi8(static_cast<char>(0x80));
    __m512i codes[C];
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
        _mm_prefetch(reinterpret_cast<const char*>(rows + (C + c) * k + d), _MM_HINT_T0);
        codes[c] = _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, rows + c * k + d), offset);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
        const __m512i row = _mm512_load_si512(x + r * kp + d);
#pragma GCC unroll 16
        for (int c = 0; c < C; ++c)
            acc[r][c] = _mm512_dpbusd_epi32(acc[r][c], codes[c], row);
    }
}

// Sixteen accumulators' lane sums as one vector (simd512.h's sixteenLaneTree on integer lanes, 45 instructions where
// sixteen separate sums took ~20 each): lane 4q + j holds the sum of acc[4j + q].
DRAGOMAN_W8A8_VNNI inline __m512i sixteenSums(const __m512i (&acc)[16]) {
    __m512 lanes[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
        lanes[i] = _mm512_castsi512_ps(acc[i]);
    return _mm512_castps_si512(sixteenLaneTree(lanes, AddInt32Lanes()));
}

// R rows from r0 against C consecutive weight rows from j (R C <= 16), read from the 64-byte line where they start
// (`skip` codes before them masked off).
template <int R, int C>
DRAGOMAN_W8A8_VNNI void tile(const Rows& x, std::int64_t r0, const std::uint8_t* w, std::int64_t k, float* y, std::int64_t ldy,
                             std::int64_t j) {
    static_assert(R * C <= 16);
    const std::int8_t* codes = x.codes + r0 * x.kp;
    __m512i acc[R][C];
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
        for (int c = 0; c < C; ++c)
            acc[r][c] = _mm512_setzero_si512();
    const std::uint8_t* rows = w + j * k - x.skip;
    const std::int64_t depth = x.skip + k;
    std::int64_t d = 0;
    if (x.skip > 0) {
        step<R, C>(acc, codes, x.kp, rows, k, 0, kAllCodes << x.skip);
        d = kStep;
    }
    for (; d + kStep <= depth; d += kStep)
        step<R, C>(acc, codes, x.kp, rows, k, d, kAllCodes);
    if (d < depth) step<R, C>(acc, codes, x.kp, rows, k, d, (__mmask64{1} << (depth - d)) - 1);
    __m512i all[16];
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i)
        all[i] = i < R * C ? acc[i / C][i % C] : _mm512_setzero_si512();
    // Lane i = r C + c: its accumulator's total (sixteenSums() left it in lane 4 (i % 4) + i / 4), less the codes'
    // offset times its row's code sum, times its row's scale.
    alignas(64) std::int32_t rowSums[16] = {};
    alignas(64) float rowScales[16] = {};
#pragma GCC unroll 16
    for (int i = 0; i < R * C; ++i) {
        rowSums[i] = x.sums[r0 + i / C];
        rowScales[i] = x.scale[r0 + i / C];
    }
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    const __m512i totals = _mm512_sub_epi32(_mm512_maskz_permutexvar_epi32(kAll16, order, sixteenSums(all)),
                                            _mm512_maskz_slli_epi32(kAll16, _mm512_load_si512(rowSums), 7));
    alignas(64) float out[16];
    _mm512_store_ps(out, _mm512_mul_ps(_mm512_maskz_cvtepi32_ps(kAll16, totals), _mm512_load_ps(rowScales)));
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
        for (int c = 0; c < C; ++c)
            y[r * ldy + j + c] = out[r * C + c];
}

// R rows against weight rows [begin, end): as many weight rows per tile as keep 16 accumulators busy.
template <int R>
void rowsAgainstVnni(const Rows& x, std::int64_t r0, const std::uint8_t* w, std::int64_t k, float* y, std::int64_t ldy, std::int64_t begin,
                     std::int64_t end) {
    // One or two rows (decoding steps): 8 weight rows per tile, between what a large model's weights streamed from
    // memory want (4: 16 at a time kept fewer loads in flight, 0.87x) and what small ones in cache want (16: fewer
    // sums across lanes per output). More rows reuse each weight line from L1, 16 accumulators per tile.
    constexpr int C = R <= 2 ? 8 : 16 / R;
    std::int64_t j = begin;
    for (; j + C <= end; j += C)
        tile<R, C>(x, r0, w, k, y, ldy, j);
    for (; j < end; ++j)
        tile<R, 1>(x, r0, w, k, y, ldy, j);
}

void blockVnni(const Rows& x, std::int64_t m, const std::int8_t* w, std::int64_t k, float* y, std::int64_t ldy, std::int64_t begin,
               std::int64_t end) {
    const auto* codes = reinterpret_cast<const std::uint8_t*>(w);
    for (std::int64_t r = 0; r < m; r += 8) {
        float* yr = y + r * ldy;
        switch (std::min<std::int64_t>(8, m - r)) {
            case 8:
                rowsAgainstVnni<8>(x, r, codes, k, yr, ldy, begin, end);
                break;
            case 7:
                rowsAgainstVnni<7>(x, r, codes, k, yr, ldy, begin, end);
                break;
            case 6:
                rowsAgainstVnni<6>(x, r, codes, k, yr, ldy, begin, end);
                break;
            case 5:
                rowsAgainstVnni<5>(x, r, codes, k, yr, ldy, begin, end);
                break;
            case 4:
                rowsAgainstVnni<4>(x, r, codes, k, yr, ldy, begin, end);
                break;
            case 3:
                rowsAgainstVnni<3>(x, r, codes, k, yr, ldy, begin, end);
                break;
            case 2:
                rowsAgainstVnni<2>(x, r, codes, k, yr, ldy, begin, end);
                break;
            default:
                rowsAgainstVnni<1>(x, r, codes, k, yr, ldy, begin, end);
                break;
        }
    }
}

// AVX2: 16 weight codes widened to 16 bits meet 16 of a row's (widened once, in quantizeRows) in one vpmaddwd, whose
// pairs are summed into 32-bit lanes (exact); 4 rows x 2 weight rows per tile; the last k % 16 in plain integers.
DRAGOMAN_W8A8_AVX2 inline std::int32_t hsum8(__m256i v) {
    const __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i t = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4E));
    return _mm_cvtsi128_si32(_mm_add_epi32(t, _mm_shuffle_epi32(t, 0xB1)));
}

template <int R, int C>
DRAGOMAN_W8A8_AVX2 void tileAvx2(const Rows& x, std::int64_t r0, const std::int8_t* w, std::int64_t k, float* y, std::int64_t ldy,
                                 std::int64_t j) {
    __m256i acc[R][C];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c)
            acc[r][c] = _mm256_setzero_si256();
    const std::int64_t full = k / 16 * 16;
    const std::int16_t* rows = x.wide + r0 * x.kp;
    for (std::int64_t d = 0; d < full; d += 16) {
        __m256i codes[C];
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c)
            codes[c] = _mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w + (j + c) * k + d)));
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
            const __m256i row = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + r * x.kp + d));
#pragma GCC unroll 4
            for (int c = 0; c < C; ++c)
                acc[r][c] = _mm256_add_epi32(acc[r][c], _mm256_madd_epi16(codes[c], row));
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
        for (int c = 0; c < C; ++c) {
            std::int64_t total = hsum8(acc[r][c]);
            for (std::int64_t d = full; d < k; ++d)
                total += std::int64_t{w[(j + c) * k + d]} * rows[r * x.kp + d];
            y[r * ldy + j + c] = output(total, x.scale[r0 + r]);
        }
}

template <int R>
void rowsAgainstAvx2(const Rows& x, std::int64_t r0, const std::int8_t* w, std::int64_t k, float* y, std::int64_t ldy, std::int64_t begin,
                     std::int64_t end) {
    std::int64_t j = begin;
    for (; j + 2 <= end; j += 2)
        tileAvx2<R, 2>(x, r0, w, k, y, ldy, j);
    for (; j < end; ++j)
        tileAvx2<R, 1>(x, r0, w, k, y, ldy, j);
}

void blockAvx2(const Rows& x, std::int64_t m, const std::int8_t* w, std::int64_t k, float* y, std::int64_t ldy, std::int64_t begin,
               std::int64_t end) {
    for (std::int64_t r = 0; r < m; r += 4) {
        float* yr = y + r * ldy;
        switch (std::min<std::int64_t>(4, m - r)) {
            case 4:
                rowsAgainstAvx2<4>(x, r, w, k, yr, ldy, begin, end);
                break;
            case 3:
                rowsAgainstAvx2<3>(x, r, w, k, yr, ldy, begin, end);
                break;
            case 2:
                rowsAgainstAvx2<2>(x, r, w, k, yr, ldy, begin, end);
                break;
            default:
                rowsAgainstAvx2<1>(x, r, w, k, yr, ldy, begin, end);
                break;
        }
    }
}

void blockPortable(const Rows& x, std::int64_t m, const std::int8_t* w, std::int64_t k, float* y, std::int64_t ldy, std::int64_t begin,
                   std::int64_t end) {
    for (std::int64_t r = 0; r < m; ++r)
        for (std::int64_t j = begin; j < end; ++j) {
            std::int64_t total = 0;
            for (std::int64_t d = 0; d < k; ++d)
                total += std::int64_t{w[j * k + d]} * x.codes[r * x.kp + d];
            y[r * ldy + j] = output(total, x.scale[r]);
        }
}

}  // namespace w8a8
}  // namespace

const char* int8ActivationKernel() {
    switch (w8a8::isa()) {
        case w8a8::Isa::Vnni:
            return "avx512-vnni";
        case w8a8::Isa::Avx2:
            return "avx2";
        case w8a8::Isa::Portable:
            break;
    }
    return "portable";
}

void int8ActivationMatmulTransposed(const float* x, const std::int8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k,
                                    const Int8Panels* panels, const ChannelEpilogue* epilogue) {
    const Int8Product product{w, n, y, panels, epilogue};
    int8ActivationProducts(x, m, k, &product, 1);
}

void int8ActivationProducts(const float* x, std::int64_t m, std::int64_t k, const Int8Product* products, std::size_t count) {
    if (m <= 0 || count == 0) return;
    // The vector kernels' 32-bit lanes hold sums of up to 2^16 products; deeper rows (no model has them) take the
    // plain loops, whose sums are 64-bit.
    const auto isa = k < (std::int64_t{1} << 16) ? w8a8::isa() : w8a8::Isa::Portable;
    // Every product's share of the work as blocks of its output columns, claimed by the kernel threads in one call.
    struct Block {
        const Int8Product* product;
        std::int64_t begin, end;
    };
    // Kept per thread: a decoding step calls this a few dozen times (the workers read it through `blocks`, a plain
    // pointer, since a thread_local named in the lambda would be the worker's own).
    thread_local std::vector<Block> storage;
    storage.clear();
    // Fewer rows take panels too where every product keeps its own (a small model's layers): a row against a panel
    // needs no sums across lanes, the one-row kernel's cost at a small model's depths (a one-row step of the bundled
    // model took 0.8x the time through its kept panels).
    bool allKept = true;
    for (std::size_t i = 0; i < count && allKept; ++i)
        allKept = products[i].panels != nullptr;
    const bool panelled = isa == w8a8::Isa::Vnni && (m >= kPanelRows || allKept) && panelProductsAvailable();
    const std::int64_t width = panelled ? kPanelColumns : w8a8::kRowBlock;
    for (std::size_t i = 0; i < count; ++i)
        for (std::int64_t begin = 0; begin < products[i].n; begin += width)
            storage.push_back({&products[i], begin, std::min(products[i].n, begin + width)});
    const Block* const blocks = storage.data();
    const auto blockCount = static_cast<std::int64_t>(storage.size());
    if (panelled) {
        const auto rows = w8a8::quantizeRows(x, m, k, 0, isa);
        const QuantizedRows quantized{rows.codes, rows.kp, rows.sums, rows.scale};
        ThreadPool::shared().parallelFor(blockCount, 1, [&](std::int64_t begin, std::int64_t end) {
            thread_local std::vector<std::uint8_t> scratch;
            for (auto b = begin; b < end; ++b) {
                const auto& [product, first, last] = blocks[b];
                const std::uint8_t* panel = product->panels ? product->panels->panel(first / kPanelColumns) : nullptr;
                if (!panel) {
                    scratch.resize(static_cast<std::size_t>(panelBytes(k) + 64));
                    auto* aligned = scratch.data() + (64 - reinterpret_cast<std::uintptr_t>(scratch.data()) % 64) % 64;
                    packPanel(product->w, k, first, last - first, aligned);
                    panel = aligned;
                }
                // The panel this thread most likely claims next (the next of its run) is asked for while this one
                // computes: a step's few rows use each panel for a few tiles only, the first of them otherwise
                // waiting on L3 for it.
                const std::uint8_t* ahead = nullptr;
                if (const auto next = b + 1; product->panels && next < blockCount && blocks[next].product->panels)
                    ahead = blocks[next].product->panels->panel(blocks[next].begin / kPanelColumns);
                panelProducts(quantized, m, panel, k, last - first, product->y + first, product->n, product->epilogue, first, ahead);
            }
        });
        return;
    }
    // VNNI reads each weight row from the 64-byte line it starts in when every row starts at the same place in a line
    // (int8_digit_steps.h); the rows' codes are laid out as many lanes later to meet them. Weights that start at
    // different places in a line are read from wherever they start.
    std::int64_t skip = 0;
    if (isa == w8a8::Isa::Vnni && k % w8a8::kStep == 0) {
        skip = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(products[0].w) % 64);
        for (std::size_t i = 1; i < count; ++i)
            if (static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(products[i].w) % 64) != skip) skip = 0;
    }
    const auto rows = w8a8::quantizeRows(x, m, k, skip, isa);
    ThreadPool::shared().parallelFor(blockCount, 1, [&](std::int64_t begin, std::int64_t end) {
        for (auto b = begin; b < end; ++b) {
            const auto& [product, first, last] = blocks[b];
            switch (isa) {
                case w8a8::Isa::Vnni:
                    w8a8::blockVnni(rows, m, product->w, k, product->y, product->n, first, last);
                    break;
                case w8a8::Isa::Avx2:
                    w8a8::blockAvx2(rows, m, product->w, k, product->y, product->n, first, last);
                    break;
                case w8a8::Isa::Portable:
                    w8a8::blockPortable(rows, m, product->w, k, product->y, product->n, first, last);
                    break;
            }
        }
    });
    for (std::size_t i = 0; i < count; ++i)
        if (products[i].epilogue) scaleAndBiasRows(products[i].y, m, products[i].n, *products[i].epilogue);
}

}  // namespace dragoman::kernels
