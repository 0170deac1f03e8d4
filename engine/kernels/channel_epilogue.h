#pragma once
// The per-output-channel tail of a product, in place and in one pass: y[r, j] = y[r, j] * scale[j] + bias[j] over
// rows of n floats (either may be null; a per-tensor scale is one value for every j). An 8-bit layer's raw products
// took two more passes through libtorch on one thread (mul_ by the scale, then a new tensor for the bias). The
// multiply and the add round separately, so the values are libtorch's bit for bit; GCC may contract a multiply and
// an add into one fused instruction in code built for FMA CPUs (C++ keeps -ffp-contract=fast even with -std=c++20),
// so tst_kernels channelEpilogueEqualsLibtorch checks the bits of the AVX-512 path too.
#include <cstdint>

namespace dragoman::kernels {

struct ChannelEpilogue {
    const float* scale = nullptr;  // n values, or one (per tensor), or none
    bool scalePerTensor = false;
    const float* bias = nullptr;  // n values or none
};
void scaleAndBiasRows(float* y, std::int64_t rows, std::int64_t n, const ChannelEpilogue& epilogue);

}  // namespace dragoman::kernels
