#include "kernels/packed_gemm.h"

#include "kernels/simd.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <algorithm>
#include <vector>

namespace dragoman::kernels {
namespace {

constexpr std::int64_t kMr = 6;    // activation rows per micro-tile
constexpr std::int64_t kNr = 16;   // weight rows (output columns) per micro-tile: two 8-float registers
constexpr std::int64_t kKc = 512;  // depth of a packed weight panel: 16 x 512 floats = 32 KiB (256-2048 measured alike)

// x [M, K] -> panels of 6 rows, depth-major: element (row 6p + r, depth d) at [(p * K + d) * 6 + r]. Rows
// past M are zero, so the micro-kernel never branches on them.
void packActivations(const float* x, std::int64_t m, std::int64_t k, std::int64_t panelBegin, std::int64_t panelEnd, float* out) {
    for (std::int64_t p = panelBegin; p < panelEnd; ++p)
        for (std::int64_t r = 0; r < kMr; ++r) {
            const auto row = p * kMr + r;
            float* to = out + p * k * kMr + r;
            if (row < m)
                for (std::int64_t d = 0; d < k; ++d)
                    to[d * kMr] = x[row * k + d];
            else
                for (std::int64_t d = 0; d < k; ++d)
                    to[d * kMr] = 0.0f;
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

// Weight rows [j0, j0 + 16) at depths [d0, d0 + kc) -> out[d * 16 + j] as float32; rows past N are zero.
// Eight rows by eight depths at a time: widened in registers and transposed, so every load is a full row run.
template <typename W>
__attribute__((target("avx2,fma,f16c"))) void packWeights(const W* w, std::int64_t n, std::int64_t k, std::int64_t j0, std::int64_t d0,
                                                          std::int64_t kc, float* out) {
    for (std::int64_t half = 0; half < 2; ++half) {
        const auto rowBase = j0 + 8 * half;
        std::int64_t d = 0;
        for (; d + 8 <= kc; d += 8) {
            __m256 r[8];
            for (int i = 0; i < 8; ++i)
                r[i] = rowBase + i < n ? _mm256_mul_ps(load8(w + (rowBase + i) * k + d0 + d), _mm256_set1_ps(kSumScale<W>))
                                       : _mm256_setzero_ps();
            transpose8(r);
            for (int t = 0; t < 8; ++t)
                _mm256_store_ps(out + (d + t) * kNr + 8 * half, r[t]);
        }
        for (; d < kc; ++d)
            for (int i = 0; i < 8; ++i)
                out[d * kNr + 8 * half + i] = rowBase + i < n ? widen(w[(rowBase + i) * k + d0 + d]) : 0.0f;
    }
}

// c[rows, cols] (+)= a-panel [kc x 6] times b-panel [kc x 16]: 12 accumulators, 2 loads and 6 broadcasts for
// every 12 FMAs. Edge tiles (fewer rows or columns) go through a local tile.
__attribute__((target("avx2,fma,f16c"))) void microKernel(std::int64_t kc, const float* a, const float* b, float* c, std::int64_t ldc,
                                                          std::int64_t rows, std::int64_t cols, bool accumulate) {
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
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < cols; ++j)
            c[r * ldc + j] = (accumulate ? c[r * ldc + j] : 0.0f) + tile[r][j];
}

template <typename W>
void packedMatmulTransposed(const float* x, const W* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    auto& pool = ThreadPool::shared();
    const auto rowPanels = (m + kMr - 1) / kMr;
    std::vector<float> packedX(static_cast<std::size_t>(rowPanels * k * kMr));
    pool.parallelFor(rowPanels, 1, [&](std::int64_t begin, std::int64_t end) { packActivations(x, m, k, begin, end, packedX.data()); });
    // Threads take runs of four 16-row weight panels; each panel is packed once per depth block and used by
    // every activation panel while it sits in L1.
    pool.parallelFor((n + kNr - 1) / kNr, 4, [&](std::int64_t begin, std::int64_t end) {
        alignas(32) float packedW[kKc * kNr];
        for (std::int64_t panel = begin; panel < end; ++panel) {
            const auto j0 = panel * kNr, cols = std::min(kNr, n - j0);
            for (std::int64_t d0 = 0; d0 < k; d0 += kKc) {
                const auto kc = std::min(kKc, k - d0);
                packWeights(w, n, k, j0, d0, kc, packedW);
                for (std::int64_t p = 0; p < rowPanels; ++p)
                    microKernel(kc, packedX.data() + (p * k + d0) * kMr, packedW, y + p * kMr * n + j0, n, std::min(kMr, m - p * kMr), cols,
                                d0 > 0);
            }
        }
    });
}

}  // namespace

void bf16PackedMatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    packedMatmulTransposed(x, w, y, m, n, k);
}

void i8PackedMatmulTransposed(const float* x, const std::int8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    packedMatmulTransposed(x, w, y, m, n, k);
}

void fp8PackedMatmulTransposed(const float* x, const std::uint8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    packedMatmulTransposed(x, reinterpret_cast<const Fp8E4M3*>(w), y, m, n, k);
}

}  // namespace dragoman::kernels
