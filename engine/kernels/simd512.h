#pragma once
// AVX-512 pieces of the kernels: sixteen consecutive weights of any dtype widened to float32 (each exactly as load8()
// widens it), the horizontal sum of a 16-lane vector, and e^x for sixteen lanes (attention's softmax, SiLU).
#include "kernels/simd.h"
#include "util/overrides.h"

namespace dragoman::kernels {

#define DRAGOMAN_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512vl")))

// AVX-512F with VL. The kernels need nothing more, so every AVX-512 CPU made since 2017 takes the same path.
// DRAGOMAN_NO_AVX512=1 keeps a process on the AVX2 kernels (their tests run that way on AVX-512 machines too).
inline bool hasAvx512() {
    static const bool yes =
        hasAvx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") && !environmentOverrides().noAvx512;
    return yes;
}

// GCC 12's unmasked forms of these pass an "undefined" vector through and warn that it may be used uninitialized
// (GCC bug 105593) wherever they are inlined; the zero-masked forms with every lane selected are the same instruction.
constexpr __mmask16 kAll16 = 0xFFFF;

// The first `count` of 16 lanes (all from 16 on, none from 0 down): a masked load of a row's last values.
constexpr __mmask16 firstLanes16(std::int64_t count) {
    return count >= 16 ? kAll16 : count <= 0 ? 0 : static_cast<__mmask16>((1u << count) - 1);
}

DRAGOMAN_AVX512 inline __m512 load16(const float* p) {
    return _mm512_loadu_ps(p);
}

DRAGOMAN_AVX512 inline __m512 load16(const std::uint16_t* p) {
    const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll16, _mm512_maskz_cvtepu16_epi32(kAll16, raw), 16));
}

DRAGOMAN_AVX512 inline __m512 load16(const std::int8_t* p) {
    return _mm512_maskz_cvtepi32_ps(kAll16, _mm512_maskz_cvtepi8_epi32(kAll16, _mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

// As load8(const Fp8E4M3*), one instruction shorter: the code sign-extended to 16 bits and shifted left by 7 is the
// same float16 bit pattern as load8's (code << 8) >> 1 (sign in bits 15 and 14, exponent and mantissa in 13-7); bit 14
// is cleared, and the value is 2^8 too small.
DRAGOMAN_AVX512 inline __m512 load16(const Fp8E4M3* p) {
    const __m256i shifted = _mm256_slli_epi16(_mm256_cvtepi8_epi16(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))), 7);
    return _mm512_maskz_cvtph_ps(kAll16, _mm256_and_si256(shifted, _mm256_set1_epi16(static_cast<short>(0xBFFF))));
}

// Lane l plus lane l + 8, then those eight as sum8() adds them.
DRAGOMAN_AVX512 inline float sum16(__m512 v) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, v);
    return sum8(_mm256_add_ps(_mm256_load_ps(lanes), _mm256_load_ps(lanes + 8)));
}

// The lane sums of sixteen vectors at once, for float (add_ps) or integer (add_epi32) lanes: vectors are added in
// halves 8, 4, 2 and 1 lanes apart (sum16's tree), each round packing two vectors into one, so lane 4 q + j of the
// result holds the sum of acc[4 j + q] (permute by 0, 4, 8, 12, 1, 5, ... for lane i = acc[i]). `add` is the lanes'
// addition; the shuffles only move bits, so the float ones serve both.
struct AddFloatLanes {
    __attribute__((target("avx512f"))) __m512 operator()(__m512 a, __m512 b) const { return _mm512_add_ps(a, b); }
};
struct AddInt32Lanes {
    __attribute__((target("avx512f"))) __m512 operator()(__m512 a, __m512 b) const {
        return _mm512_castsi512_ps(_mm512_add_epi32(_mm512_castps_si512(a), _mm512_castps_si512(b)));
    }
};
template <typename Add>
__attribute__((target("avx512f"))) inline __m512 sixteenLaneTree(const __m512 (&acc)[16], Add add) {
    __m512 halves[8], quarters[4], pairs[2];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
        const __m512 a = acc[2 * i], b = acc[2 * i + 1];
        halves[i] = add(_mm512_maskz_shuffle_f32x4(kAll16, a, b, _MM_SHUFFLE(1, 0, 1, 0)),
                        _mm512_maskz_shuffle_f32x4(kAll16, a, b, _MM_SHUFFLE(3, 2, 3, 2)));
    }
#pragma GCC unroll 4
    for (int i = 0; i < 4; ++i) {
        const __m512 a = halves[2 * i], b = halves[2 * i + 1];
        quarters[i] = add(_mm512_maskz_shuffle_f32x4(kAll16, a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_maskz_shuffle_f32x4(kAll16, a, b, _MM_SHUFFLE(3, 1, 3, 1)));
    }
#pragma GCC unroll 2
    for (int i = 0; i < 2; ++i) {
        const __m512 a = quarters[2 * i], b = quarters[2 * i + 1];
        pairs[i] = add(_mm512_maskz_unpacklo_ps(kAll16, a, b), _mm512_maskz_unpackhi_ps(kAll16, a, b));
    }
    return add(_mm512_castpd_ps(_mm512_maskz_unpacklo_pd(0xFF, _mm512_castps_pd(pairs[0]), _mm512_castps_pd(pairs[1]))),
               _mm512_castpd_ps(_mm512_maskz_unpackhi_pd(0xFF, _mm512_castps_pd(pairs[0]), _mm512_castps_pd(pairs[1]))));
}

// e^x for 16 lanes: Cephes' expf (x = n ln 2 + r, |r| <= ln 2 / 2, a degree-6 polynomial in r), scaled by 2^n.
DRAGOMAN_AVX512 inline __m512 exp16(__m512 x) {
    x = _mm512_maskz_max_ps(kAll16, x, _mm512_set1_ps(-103.0f));  // below it e^x is 0 in float32 anyway
    const __m512 n = _mm512_maskz_roundscale_ps(kAll16, _mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
    r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
    __m512 p = _mm512_set1_ps(1.9875691500e-4f);
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
    p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
    const __m512 y = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
    return _mm512_maskz_scalef_ps(kAll16, y, n);
}

}  // namespace dragoman::kernels
