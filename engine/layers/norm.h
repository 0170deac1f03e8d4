#pragma once
// Normalisation layers over the last dimension, with weights as mapped (bf16 norm weights are widened per
// call or in the kernel: they are a few hundred values).
#include "layers/placement.h"
#include "layers/weights.h"

#include <torch/types.h>

#include <string>

namespace dragoman {

// RMSNorm as transformers computes it: float32 x * rsqrt(mean(x^2) + eps), then weight * x. On the CPU
// kernels one pass of kernels::rmsNorm per row.
class RmsNorm {
public:
    RmsNorm() = default;
    RmsNorm(WeightBinder& weights, const std::string& name, std::int64_t dim, double eps, Placement placement = {});

    torch::Tensor operator()(const torch::Tensor& x) const;
    std::int64_t bytes() const { return weight_.defined() ? static_cast<std::int64_t>(weight_.nbytes()) : 0; }
    void place(Placement placement);
    const torch::Tensor& weight() const { return weight_; }

private:
    torch::Tensor weight_;
    double eps_ = 1e-5;
    Placement placement_;
};

// LayerNorm (weight and bias) as torch.nn.LayerNorm.
class LayerNorm {
public:
    LayerNorm() = default;
    // Binds `prefix`weight and `prefix`bias [dim].
    LayerNorm(WeightBinder& weights, const std::string& prefix, std::int64_t dim, double eps);

    torch::Tensor operator()(const torch::Tensor& x) const;
    // (*this)(x + h); one pass of the engine's kernel when nothing is tracked by autograd.
    torch::Tensor residual(const torch::Tensor& x, const torch::Tensor& h) const;

private:
    torch::Tensor weight_, bias_;
    double eps_ = 1e-5;
};

}  // namespace dragoman
