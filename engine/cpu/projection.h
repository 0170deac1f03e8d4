#pragma once
// x W^T on the CPU kernels, the kernel chosen by the weights' dtype, the row count and the CPU (the one place the
// engine's kernels are chosen: the layers' tensors and the libtorch-free forward passes both come here; only on CPUs
// without AVX2 do the layers send long prompts to OpenBLAS through libtorch first, where the forward passes take the
// portable kernels). The raw products: an 8-bit matrix's scale is the caller's (kernels/channel_epilogue.h), so several
// outputs can share one pass.
#include "cpu/matrix.h"

#include <cstddef>
#include <cstdint>

namespace dragoman::cpu {

// y [m, w.rows] = x [m, w.cols] . w^T. With `bf16Activations` (a bf16 model) the rows may be rounded to bf16 on CPUs
// with AVX512-BF16 (kernels/bf16_dot_gemm.h), as the model computes.
void project(const float* x, std::int64_t m, const Matrix& w, float* y, bool bf16Activations);

// Up to this many rows (a decoding step, a few beams, a batch of sequences) products run on the decoding kernels,
// which sum each output in the same order whatever the row count: a batched step gives each sequence the numbers of
// its step alone.
constexpr std::int64_t kSmallRows = 16;

// Whether products by matrices of this dtype give each output row the numbers of its input row alone, whatever rows
// come with it, at every row count on this CPU: float32, and 8-bit with float32 activations, on AVX2 CPUs.
bool rowStableAtAnyCount(Dtype type, bool bf16Activations);
// The same for one matrix: also int8 weights with int8 activations (Matrix::int8Activations), on every CPU.
bool rowStableAtAnyCount(const Matrix& w, bool bf16Activations);

// One row against several matrices of depth k in one pass over all their weights (a decoding step's q, k and v, or
// gate and up): y[i] = x . ws[i]^T, raw. False, and nothing done, where they cannot share a kernel (mixed families,
// float32 weights, a scaled bf16 matrix, int8 activations); then project() each.
bool projectRowTogether(const float* x, std::int64_t k, const Matrix* const* ws, float* const* ys, std::size_t count, bool bf16Activations);

}  // namespace dragoman::cpu
