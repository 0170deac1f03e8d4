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

// AVX-512VL: 32 vector registers for 8-lane vectors too (the 8-row decoding tile needs 16 accumulators).
inline bool hasAvx512vl() {
    static const bool yes = hasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
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

// As widen(Fp8E4M3): sign and the 7 low bits moved into float16 fields, converted, times 2^8.
__attribute__((target("avx2,fma,f16c"))) inline __m256 load8(const Fp8E4M3* p) {
    const __m128i codes = _mm_cvtepu8_epi16(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p)));
    const __m128i sign = _mm_slli_epi16(_mm_and_si128(codes, _mm_set1_epi16(0x80)), 8);
    const __m128i magnitude = _mm_slli_epi16(_mm_and_si128(codes, _mm_set1_epi16(0x7F)), 7);
    return _mm256_mul_ps(_mm256_cvtph_ps(_mm_or_si128(sign, magnitude)), _mm256_set1_ps(256.0f));
}

}  // namespace dragoman::kernels
