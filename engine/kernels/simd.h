#pragma once
// Pieces the AVX2 kernels share: the run-time CPU check, the horizontal sum of a float vector, and eight
// weights of any dtype widened to float32.
#include "kernels/bf16.h"

#include <immintrin.h>

#include <cstdint>

namespace dragoman::kernels {

// AVX2 with FMA and F16C (every AVX2 CPU made has F16C; the FP8 loads convert through float16).
inline bool hasAvx2() {
    static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    return yes;
}

__attribute__((target("avx2,fma,f16c"))) inline float sum8(__m256 v) {
    const __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    __m128 s = _mm_add_ps(lo, hi);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const float* p) {
    return _mm256_loadu_ps(p);
}

__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const std::uint16_t* p) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(raw), 16));
}

__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const std::int8_t* p) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// E4M3 codes as float16 values 2^8 times smaller, which is exact: the code is shifted into a float16's high
// byte (sign, exponent, mantissa one bit too far left), an arithmetic shift right by one moves exponent and
// mantissa into place and copies the sign into bit 14, which is cleared. The factor 2^8 comes back once per
// sum (kSumScale): one multiply per output instead of one per weight.
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const Fp8E4M3* p) {
    const __m128i high = _mm_unpacklo_epi8(_mm_setzero_si128(), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    return _mm256_cvtph_ps(_mm_and_si128(_mm_srai_epi16(high, 1), _mm_set1_epi16(static_cast<short>(0xBFFF))));
}

// What a sum of load8() products is multiplied by to give the true sum (exact: a power of two).
template <typename W>
inline constexpr float kSumScale = 1.0f;
template <>
inline constexpr float kSumScale<Fp8E4M3> = 256.0f;

}  // namespace dragoman::kernels
