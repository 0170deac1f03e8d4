#pragma once
// Small tensor operations shared by the architectures.
#include "runtime/threads.h"

#include <torch/torch.h>

namespace dragoman::ops {

// project(x, W) = x W^T for float32 x [..., in] and W as mapped: float32 through linear() below, bfloat16
// through a kernel that widens the weights on the fly (float32 accumulation), so bf16 checkpoints are never
// converted (kernels/project.cpp).
torch::Tensor project(const torch::Tensor& x, const torch::Tensor& weight);

// Up to this many rows (a decoding step, a few beams) a float32 product runs on the engine's own kernel: it
// streams W once at memory speed for all rows, where libtorch sent one row to a GEMM 2-4x slower than mv()
// and OpenBLAS ran 4 rows at ~8 GFLOP/s.
constexpr std::int64_t kSmallRows = 4;
torch::Tensor smallRowsLinear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {});

// y = x W^T + b for x [..., in]. Weights other than float32 (bf16 checkpoints) go through project(), which
// widens them on the fly; the bias is widened (a few hundred values). A few rows go through
// smallRowsLinear() unless autograd must see the product (tools/train); the rest through libtorch.
inline torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {}) {
    if (weight.scalar_type() != torch::kFloat32) {
        auto y = project(x, weight);
        return bias.defined() ? y + bias.to(torch::kFloat32) : y;
    }
    const bool tracked = torch::GradMode::is_enabled() && (weight.requires_grad() || x.requires_grad());
    if (!tracked && x.numel() <= kSmallRows * x.size(-1) && x.scalar_type() == torch::kFloat32 && weight.is_contiguous()) {
        return smallRowsLinear(x, weight, bias);
    }
    ParallelBlas blas(x.numel() * weight.size(0));
    return torch::nn::functional::linear(x, weight, bias);
}

// Scaled dot-product attention of one new query row per sequence (a decoding step) over cached keys and
// values, in one pass of the engine's kernel (kernels/attention.h). queries: contiguous float32
// [batch, heads * head_dim]; keys, values: [batch or 1 (shared), kv_heads, length, head_dim] views with
// contiguous rows. Returns [batch, heads * head_dim], the heads merged.
torch::Tensor attendOneQuery(const torch::Tensor& queries, const torch::Tensor& keys, const torch::Tensor& values, std::int64_t heads);

// x W^T with libtorch's own float32 matmul, bf16 weights widened for the call (a temporary; device memory
// keeps them bf16): the products off the engine's CPU kernels, on a CUDA device (models/placement.h).
// Float32 arithmetic keeps the reference's 1e-4 parity: bf16 products measured up to 8e-2 off on the fixtures.
torch::Tensor libtorchProject(const torch::Tensor& x, const torch::Tensor& weight);

// project() of the same x by several weights; one decoding row by bf16 weights runs as a single kernel pass.
std::vector<torch::Tensor> projectMany(const torch::Tensor& x, const std::vector<torch::Tensor>& weights);

}  // namespace dragoman::ops
