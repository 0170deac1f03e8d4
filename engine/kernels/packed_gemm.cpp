#include "kernels/packed_gemm.h"

#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

namespace dragoman::kernels {
namespace {

constexpr std::int64_t kKc = 512;  // depth of a packed weight panel (256-2048 measured alike on AVX2)

// The two register blockings: AVX2 6 rows x 16 columns (12 accumulators of 16 registers), AVX-512 8 x 32 (16 of 32).
// Both sum every output in the same order (one FMA per depth within a 512-deep panel, panels added in order), so
// they give the same numbers.
struct Avx2Blocking {
    static constexpr std::int64_t kMr = 6, kNr = 16;
};
struct Avx512Blocking {
    static constexpr std::int64_t kMr = 8, kNr = 32;
};

// x [M, K] -> panels of MR rows, depth-major: element (row MR p + r, depth d) at [(p * K + d) * MR + r]. Rows
// past M are zero, so the micro-kernel never branches on them.
template <std::int64_t MR>
void packActivations(const float* x, std::int64_t m, std::int64_t k, std::int64_t panelBegin, std::int64_t panelEnd, float* out) {
    for (std::int64_t p = panelBegin; p < panelEnd; ++p)
        for (std::int64_t r = 0; r < MR; ++r) {
            const auto row = p * MR + r;
            float* to = out + p * k * MR + r;
            if (row < m)
                for (std::int64_t d = 0; d < k; ++d)
                    to[d * MR] = x[row * k + d];
            else
                for (std::int64_t d = 0; d < k; ++d)
                    to[d * MR] = 0.0f;
        }
}

// In-register transpose of an 8 x 8 float block: r[i] holds row i before, column i after.
__attribute__((target("avx2,fma,f16c"))) inline void transpose8(__m256 r[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 s0 = _mm256_shuffle_ps(t0, t2, 0x44), s1 = _mm256_shuffle_ps(t0, t2, 0xee);
    const __m256 s2 = _mm256_shuffle_ps(t1, t3, 0x44), s3 = _mm256_shuffle_ps(t1, t3, 0xee);
    const __m256 s4 = _mm256_shuffle_ps(t4, t6, 0x44), s5 = _mm256_shuffle_ps(t4, t6, 0xee);
    const __m256 s6 = _mm256_shuffle_ps(t5, t7, 0x44), s7 = _mm256_shuffle_ps(t5, t7, 0xee);
    r[0] = _mm256_permute2f128_ps(s0, s4, 0x20);
    r[1] = _mm256_permute2f128_ps(s1, s5, 0x20);
    r[2] = _mm256_permute2f128_ps(s2, s6, 0x20);
    r[3] = _mm256_permute2f128_ps(s3, s7, 0x20);
    r[4] = _mm256_permute2f128_ps(s0, s4, 0x31);
    r[5] = _mm256_permute2f128_ps(s1, s5, 0x31);
    r[6] = _mm256_permute2f128_ps(s2, s6, 0x31);
    r[7] = _mm256_permute2f128_ps(s3, s7, 0x31);
}

// Weight rows [j0, j0 + NR) at depths [d0, d0 + kc) -> out[d * NR + j] as float32; rows past N are zero.
// Eight rows by eight depths at a time: widened in registers and transposed, so every load is a full row run.
template <std::int64_t NR, typename W>
__attribute__((target("avx2,fma,f16c"))) void packWeights(const W* w, std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t d0,
                                                          std::int64_t kc, float* out) {
    for (std::int64_t group = 0; group < NR / 8; ++group) {
        const auto rowBase = j0 + 8 * group;
        std::int64_t d = 0;
        for (; d + 8 <= kc; d += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; ++i)
                r[i] = rowBase + i < n ? _mm256_mul_ps(load8(w + (rowBase + i) * k + d0 + d), _mm256_set1_ps(kSumScale<W>))
                                       : _mm256_setzero_ps();
            transpose8(r);
            for (int t = 0; t < 8; ++t)
                _mm256_store_ps(out + (d + t) * NR + 8 * group, r[t]);
        }
        for (; d < kc; ++d)
            for (int i = 0; i < 8; ++i)
                out[d * NR + 8 * group + i] = rowBase + i < n ? widen(w[(rowBase + i) * k + d0 + d]) : 0.0f;
    }
}

// Writes (or adds, after the first panel) a tile's sums; edge tiles (fewer rows or columns) through a local copy.
template <std::int64_t MR, std::int64_t NR>
void storeEdge(const float (&tile)[MR][NR], float* c, std::int64_t ldc, std::int64_t rows, std::int64_t cols, bool accumulate) {
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < cols; ++j)
            c[r * ldc + j] = (accumulate ? c[r * ldc + j] : 0.0f) + tile[r][j];
}

// c[rows, cols] (+)= a-panel [kc x 6] times b-panel [kc x 16]: 12 accumulators, 2 loads and 6 broadcasts for
// every 12 FMAs.
__attribute__((target("avx2,fma,f16c"))) void microKernel(Avx2Blocking, std::int64_t kc, const float* a, const float* b, float* c,
                                                          std::int64_t ldc, std::int64_t rows, std::int64_t cols, bool accumulate) {
    constexpr auto kMr = Avx2Blocking::kMr, kNr = Avx2Blocking::kNr;
    __m256 acc0[kMr], acc1[kMr];
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r)
        acc0[r] = acc1[r] = _mm256_setzero_ps();
    for (std::int64_t d = 0; d < kc; ++d) {
        const __m256 b0 = _mm256_load_ps(b + d * kNr), b1 = _mm256_load_ps(b + d * kNr + 8);
#pragma GCC unroll 6
        for (int r = 0; r < kMr; ++r) {
            const __m256 av = _mm256_broadcast_ss(a + d * kMr + r);
            acc0[r] = _mm256_fmadd_ps(av, b0, acc0[r]);
            acc1[r] = _mm256_fmadd_ps(av, b1, acc1[r]);
        }
    }
    if (rows == kMr && cols == kNr) {
#pragma GCC unroll 6
        for (int r = 0; r < kMr; ++r) {
            float* to = c + r * ldc;
            if (accumulate) {
                acc0[r] = _mm256_add_ps(acc0[r], _mm256_loadu_ps(to));
                acc1[r] = _mm256_add_ps(acc1[r], _mm256_loadu_ps(to + 8));
            }
            _mm256_storeu_ps(to, acc0[r]);
            _mm256_storeu_ps(to + 8, acc1[r]);
        }
        return;
    }
    alignas(32) float tile[kMr][kNr];
#pragma GCC unroll 6
    for (int r = 0; r < kMr; ++r) {
        _mm256_store_ps(tile[r], acc0[r]);
        _mm256_store_ps(tile[r] + 8, acc1[r]);
    }
    storeEdge(tile, c, ldc, rows, cols, accumulate);
}

// The same on AVX-512: a-panel [kc x 8] times b-panel [kc x 32], 16 accumulators, 2 loads and 8 broadcasts for every
// 16 FMAs (twice the AVX2 kernel's work per instruction).
DRAGOMAN_AVX512 void microKernel(Avx512Blocking, std::int64_t kc, const float* a, const float* b, float* c, std::int64_t ldc,
                                 std::int64_t rows, std::int64_t cols, bool accumulate) {
    constexpr auto kMr = Avx512Blocking::kMr, kNr = Avx512Blocking::kNr;
    __m512 acc0[kMr], acc1[kMr];
#pragma GCC unroll 8
    for (int r = 0; r < kMr; ++r)
        acc0[r] = acc1[r] = _mm512_setzero_ps();
    for (std::int64_t d = 0; d < kc; ++d) {
        const __m512 b0 = _mm512_load_ps(b + d * kNr), b1 = _mm512_load_ps(b + d * kNr + 16);
#pragma GCC unroll 8
        for (int r = 0; r < kMr; ++r) {
            const __m512 av = _mm512_set1_ps(a[d * kMr + r]);
            acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
            acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
        }
    }
    if (rows == kMr && cols == kNr) {
#pragma GCC unroll 8
        for (int r = 0; r < kMr; ++r) {
            float* to = c + r * ldc;
            if (accumulate) {
                acc0[r] = _mm512_add_ps(acc0[r], _mm512_loadu_ps(to));
                acc1[r] = _mm512_add_ps(acc1[r], _mm512_loadu_ps(to + 16));
            }
            _mm512_storeu_ps(to, acc0[r]);
            _mm512_storeu_ps(to + 16, acc1[r]);
        }
        return;
    }
    alignas(64) float tile[kMr][kNr];
#pragma GCC unroll 8
    for (int r = 0; r < kMr; ++r) {
        _mm512_store_ps(tile[r], acc0[r]);
        _mm512_store_ps(tile[r] + 16, acc1[r]);
    }
    storeEdge(tile, c, ldc, rows, cols, accumulate);
}

template <typename Blocking, typename W>
void packedMatmulTransposed(const float* x, const W* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    constexpr auto kMr = Blocking::kMr, kNr = Blocking::kNr;
    auto& pool = ThreadPool::shared();
    const auto rowPanels = (m + kMr - 1) / kMr;
    // Kept per thread between calls and never cleared: packActivations writes every element.
    thread_local std::vector<float> callersPanels;
    auto& packedX = callersPanels;  // the workers use the caller's (a thread_local name is each thread's own)
    packedX.resize(static_cast<std::size_t>(rowPanels * k * kMr));
    pool.parallelFor(rowPanels, 1,
                     [&](std::int64_t begin, std::int64_t end) { packActivations<kMr>(x, m, k, begin, end, packedX.data()); });
    // Threads take runs of weight panels (64 columns at a time); each panel is packed once per depth block and used
    // by every activation panel while it sits in cache.
    pool.parallelFor((n + kNr - 1) / kNr, 64 / kNr, [&](std::int64_t begin, std::int64_t end) {
        alignas(64) float packedW[kKc * kNr];
        for (std::int64_t panel = begin; panel < end; ++panel) {
            const auto j0 = panel * kNr, cols = std::min(kNr, n - j0);
            for (std::int64_t d0 = 0; d0 < k; d0 += kKc) {
                const auto kc = std::min(kKc, k - d0);
                packWeights<kNr>(w, n, k, j0, d0, kc, packedW);
                for (std::int64_t p = 0; p < rowPanels; ++p)
                    microKernel(Blocking{}, kc, packedX.data() + (p * k + d0) * kMr, packedW, y + p * kMr * n + j0, n,
                                std::min(kMr, m - p * kMr), cols, d0 > 0);
            }
        }
    });
    if (packedX.capacity() > (std::size_t{64} << 20)) std::vector<float>().swap(packedX);  // a long prompt's panels go
}

template <typename W>
void packedProduct(const float* x, const W* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    if (hasAvx512())
        packedMatmulTransposed<Avx512Blocking>(x, w, y, m, n, k);
    else
        packedMatmulTransposed<Avx2Blocking>(x, w, y, m, n, k);
}

}  // namespace

void bf16PackedMatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    packedProduct(x, w, y, m, n, k);
}

void i8PackedMatmulTransposed(const float* x, const std::int8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    packedProduct(x, w, y, m, n, k);
}

void fp8PackedMatmulTransposed(const float* x, const std::uint8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    packedProduct(x, reinterpret_cast<const Fp8E4M3*>(w), y, m, n, k);
}

}  // namespace dragoman::kernels
