#pragma once
// AVX-512 pieces for the batched tiles: two weight rows' eight-element groups side by side in one 16-lane vector
// (lanes 0-7 from the first row, 8-15 from the second, each widened as load8() widens it), and the same eight
// activations in both halves. A lane then sums exactly what the matching lane of an 8-lane kernel sums, in the same
// order, so a row's result does not depend on which kernel or how many rows computed it.
#include "kernels/simd.h"

namespace dragoman::kernels {

#define DRAGOMAN_AVX512 __attribute__((target("avx2,fma,f16c,avx512f,avx512vl")))

// GCC 12's unmasked forms of these pass an "undefined" vector through and warn that it may be used uninitialized
// (GCC bug 105593) wherever they are inlined; the zero-masked forms with every lane selected are the same instruction.
constexpr __mmask16 kAll16 = 0xFFFF;
constexpr __mmask8 kAll8 = 0xFF;

DRAGOMAN_AVX512 inline __m512 loadPair(const float* a, const float* b) {
    return _mm512_castpd_ps(_mm512_maskz_insertf64x4(kAll8, _mm512_castpd256_pd512(_mm256_castps_pd(_mm256_loadu_ps(a))),
                                                     _mm256_castps_pd(_mm256_loadu_ps(b)), 1));
}

DRAGOMAN_AVX512 inline __m512 loadPair(const std::uint16_t* a, const std::uint16_t* b) {
    const __m256i raw = _mm256_inserti128_si256(_mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(a))),
                                                _mm_loadu_si128(reinterpret_cast<const __m128i*>(b)), 1);
    return _mm512_castsi512_ps(_mm512_maskz_slli_epi32(kAll16, _mm512_maskz_cvtepu16_epi32(kAll16, raw), 16));
}

DRAGOMAN_AVX512 inline __m128i loadEightBytePair(const void* a, const void* b) {
    return _mm_unpacklo_epi64(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(a)), _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b)));
}

DRAGOMAN_AVX512 inline __m512 loadPair(const std::int8_t* a, const std::int8_t* b) {
    return _mm512_maskz_cvtepi32_ps(kAll16, _mm512_maskz_cvtepi8_epi32(kAll16, loadEightBytePair(a, b)));
}

// As load8(const Fp8E4M3*): each code in a float16's high byte, shifted into place, bit 14 cleared (2^8 too small).
DRAGOMAN_AVX512 inline __m512 loadPair(const Fp8E4M3* a, const Fp8E4M3* b) {
    const __m256i high = _mm256_slli_epi16(_mm256_cvtepu8_epi16(loadEightBytePair(a, b)), 8);
    return _mm512_maskz_cvtph_ps(kAll16, _mm256_and_si256(_mm256_srai_epi16(high, 1), _mm256_set1_epi16(static_cast<short>(0xBFFF))));
}

// Eight activations in both halves.
DRAGOMAN_AVX512 inline __m512 broadcastEight(const float* x) {
    return _mm512_castpd_ps(_mm512_maskz_broadcast_f64x4(kAll8, _mm256_castps_pd(_mm256_loadu_ps(x))));
}

// The sums of the two halves, each added up as sum8() adds up an 8-lane vector.
struct HalfSums {
    float low, high;
};
DRAGOMAN_AVX512 inline HalfSums sumHalves(__m512 v) {
    alignas(64) float lanes[16];
    _mm512_store_ps(lanes, v);
    return {sum8(_mm256_load_ps(lanes)), sum8(_mm256_load_ps(lanes + 8))};
}

}  // namespace dragoman::kernels
