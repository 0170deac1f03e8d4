#pragma once
// y = x W^T for long weight rows on AVX-512 CPUs (the caller, bf16_matmul.cpp, checks hasAvx512() and that K is a
// multiple of 8): float32 activations, weights of any dtype widened in registers, sixteen consecutive K at a time.
// Every output is summed in one order whatever the other rows are: lane l of one accumulator takes k = l, l + 16, ...
// (a last group of 8 in lanes 0-7), then sum16(). A sequence decoded alone (M = 1) and in a batch gets the same
// numbers, on any M and any split over the thread pool. (Products of kPackedRows rows and more, prompts, go to
// other kernels: layers/linear.cpp; batched decoding steps stay below that.) The AVX2 kernels keep their own 8-lane
// order, so one process always uses one family.
#include "kernels/bf16.h"

#include <cstdint>

namespace dragoman::kernels {

// Rows [rowBegin, rowEnd) of W against all M activation rows. The raw sums: 8-bit weights before their scale.
template <typename W>
void avx512Block(const float* x, const W* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t rowBegin,
                 std::int64_t rowEnd);

extern template void avx512Block<float>(const float*, const float*, float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                        std::int64_t);
extern template void avx512Block<std::uint16_t>(const float*, const std::uint16_t*, float*, std::int64_t, std::int64_t, std::int64_t,
                                                std::int64_t, std::int64_t);
extern template void avx512Block<std::int8_t>(const float*, const std::int8_t*, float*, std::int64_t, std::int64_t, std::int64_t,
                                              std::int64_t, std::int64_t);
extern template void avx512Block<Fp8E4M3>(const float*, const Fp8E4M3*, float*, std::int64_t, std::int64_t, std::int64_t, std::int64_t,
                                          std::int64_t);

}  // namespace dragoman::kernels
