#pragma once
// Pieces the AVX2 kernels share: the run-time CPU check and the horizontal sum of a float vector.
#include <immintrin.h>

namespace dragoman::kernels {

inline bool hasAvx2() {
    static const bool yes = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return yes;
}

// AVX-512VL: 32 vector registers for 8-lane vectors too (the 8-row decoding tile needs 16 accumulators).
inline bool hasAvx512vl() {
    static const bool yes = hasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
    return yes;
}

__attribute__((target("avx2,fma"))) inline float sum8(__m256 v) {
    const __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
    __m128 s = _mm_add_ps(lo, hi);
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
    return _mm_cvtss_f32(s);
}

}  // namespace dragoman::kernels
