#pragma once
// Float8 E4M3 (fn) encoding, as compressed-tensors and ../shared/fixtures/gen/quant.py write it: the nearest
// code, ties to the even code, magnitudes clipped to 448 first; -0 is written as +0. Decoding is
// kernels::widen(Fp8E4M3) (kernels/bf16.h).
#include <cstdint>

namespace dragoman {

std::uint8_t encodeE4M3(double value);

}  // namespace dragoman
