#include "kernels/layer_norm.h"

#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <immintrin.h>

#include <cmath>

// Multiplies and adds stay separate roundings (C++ keeps -ffp-contract=fast, which would fuse them in the vector code
// only), so both paths give the same bits.
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")

namespace dragoman::kernels {
namespace {

constexpr int kNormLanes = 8;

// The eight lanes' partial sums (lane j: the values at i = j mod 8) added in one fixed order.
double total(const double (&lanes)[kNormLanes]) {
    return ((lanes[0] + lanes[1]) + (lanes[2] + lanes[3])) + ((lanes[4] + lanes[5]) + (lanes[6] + lanes[7]));
}

void rowPortable(const float* x, const float* h, const float* weight, const float* bias, float* o, std::int64_t d, double eps) {
    double sums[kNormLanes] = {};
    for (std::int64_t i = 0; i < d; ++i)
        sums[i % kNormLanes] += (o[i] = x[i] + h[i]);  // o may alias x or h
    const double mean = total(sums) / static_cast<double>(d);
    double squares[kNormLanes] = {};
    for (std::int64_t i = 0; i < d; ++i) {
        const double centered = o[i] - mean;
        squares[i % kNormLanes] += centered * centered;
    }
    const double rstd = 1.0 / std::sqrt(total(squares) / static_cast<double>(d) + eps);
    for (std::int64_t i = 0; i < d; ++i)
        o[i] = static_cast<float>((o[i] - mean) * rstd) * weight[i] + bias[i];
}

// rowPortable eight values at a time: each lane's sum takes its values in the same order, missing values of the last
// eight add +0.
DRAGOMAN_AVX512 void rowAvx512(const float* x, const float* h, const float* weight, const float* bias, float* o, std::int64_t d,
                               double eps) {
    __m512d sums = _mm512_setzero_pd();
    for (std::int64_t i = 0; i < d; i += kNormLanes) {
        const __mmask8 lanes = static_cast<__mmask8>(firstLanes16(d - i));
        const __m256 v = _mm256_add_ps(_mm256_maskz_loadu_ps(lanes, x + i), _mm256_maskz_loadu_ps(lanes, h + i));
        _mm256_mask_storeu_ps(o + i, lanes, v);
        sums = _mm512_add_pd(sums, _mm512_maskz_cvtps_pd(0xFF, v));
    }
    alignas(64) double lanes[kNormLanes];
    _mm512_store_pd(lanes, sums);
    const double mean = total(lanes) / static_cast<double>(d);
    const __m512d meanLanes = _mm512_set1_pd(mean);
    __m512d squares = _mm512_setzero_pd();
    for (std::int64_t i = 0; i < d; i += kNormLanes) {
        const __mmask8 valid = static_cast<__mmask8>(firstLanes16(d - i));
        const __m512d centered = _mm512_maskz_sub_pd(valid, _mm512_maskz_cvtps_pd(0xFF, _mm256_maskz_loadu_ps(valid, o + i)), meanLanes);
        squares = _mm512_add_pd(squares, _mm512_mul_pd(centered, centered));
    }
    _mm512_store_pd(lanes, squares);
    const double rstd = 1.0 / std::sqrt(total(lanes) / static_cast<double>(d) + eps);
    const __m512d rstdLanes = _mm512_set1_pd(rstd);
    for (std::int64_t i = 0; i < d; i += kNormLanes) {
        const __mmask8 valid = static_cast<__mmask8>(firstLanes16(d - i));
        const __m512d centered = _mm512_sub_pd(_mm512_maskz_cvtps_pd(0xFF, _mm256_maskz_loadu_ps(valid, o + i)), meanLanes);
        const __m256 normed = _mm512_maskz_cvtpd_ps(0xFF, _mm512_mul_pd(centered, rstdLanes));
        const __m256 scaled = _mm256_mul_ps(normed, _mm256_maskz_loadu_ps(valid, weight + i));
        _mm256_mask_storeu_ps(o + i, valid, _mm256_add_ps(scaled, _mm256_maskz_loadu_ps(valid, bias + i)));
    }
}

}  // namespace

void addLayerNorm(const float* x, const float* h, const float* weight, const float* bias, float* out, std::int64_t rows, std::int64_t d,
                  double eps) {
    const bool wide = hasAvx512();
    const auto some = [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t r = begin; r < end; ++r) {
            if (wide)
                rowAvx512(x + r * d, h + r * d, weight, bias, out + r * d, d, eps);
            else
                rowPortable(x + r * d, h + r * d, weight, bias, out + r * d, d, eps);
        }
    };
    ThreadPool::shared().parallelFor(rows, ThreadPool::rowsPerClaim(d), some);
}

}  // namespace dragoman::kernels

#pragma GCC pop_options
