#pragma once
// Small tensor operations shared by the architectures.
#include <torch/torch.h>

namespace dragoman::ops {

torch::Tensor project(const torch::Tensor& x, const torch::Tensor& weight);

// y = x W^T + b for x [..., in]. Weights other than float32 (bf16 checkpoints) go through project(), which
// widens them on the fly; the bias is widened (a few hundred values). A single row (one decoding step) goes through a matrix-vector product:
// libtorch's linear() sends it to a GEMM that ran 2-4x slower than mv() on the same weights here, and a
// decoding step is bound by reading W once.
inline torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {}) {
    if (weight.scalar_type() != torch::kFloat32) {
        auto y = project(x, weight);
        return bias.defined() ? y + bias.to(torch::kFloat32) : y;
    }
    if (x.numel() == x.size(-1)) {
        auto sizes = x.sizes().vec();
        sizes.back() = weight.size(0);
        auto row = x.reshape({x.size(-1)});
        auto y = bias.defined() ? torch::addmv(bias, weight, row) : torch::mv(weight, row);
        return y.view(sizes);
    }
    return torch::nn::functional::linear(x, weight, bias);
}

// project(x, W) = x W^T for float32 x [..., in] and W as mapped: float32 through linear() above, bfloat16
// through a kernel that widens the weights on the fly (float32 accumulation), so bf16 checkpoints are never
// converted (kernels/project.cpp).
// project() of the same x by several weights; one decoding row by bf16 weights runs as a single kernel pass.
std::vector<torch::Tensor> projectMany(const torch::Tensor& x, const std::vector<torch::Tensor>& weights);

}  // namespace dragoman::ops
