#pragma once
// A weight matrix as the CPU kernels read it: the checkpoint's bytes where they are mapped, never copied. The CPU
// forward passes (cpu/) take these instead of tensors, so they run without libtorch; the layers (layers/) make them
// from their tensors.
#include <cstdint>

namespace dragoman::cpu {

enum class Dtype { F32, BF16, I8, FP8 };  // FP8: float8 E4M3 codes

struct Matrix {
    const void* data = nullptr;  // [rows, cols] row-major, contiguous
    Dtype type = Dtype::F32;
    std::int64_t rows = 0, cols = 0;  // outputs, inputs
    // 8-bit weights' dequantization scale, float32: one per output row, or one for the whole matrix; none: 1.
    const float* scale = nullptr;
    bool scalePerTensor = false;
    // int8 weights whose products quantize each activation row to int8 first (W8A8, kernels/int8_activation_gemm.h).
    bool int8Activations = false;
};

}  // namespace dragoman::cpu
