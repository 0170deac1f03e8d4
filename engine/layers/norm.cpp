#include "layers/norm.h"

#include "kernels/layer_norm.h"
#include "kernels/rms_norm.h"
#include "layers/torch_device.h"

#include <torch/torch.h>

namespace dragoman {

RmsNorm::RmsNorm(WeightBinder& weights, const std::string& name, std::int64_t dim, double eps, Placement placement)
    : weight_(weights.take(name, {dim})), eps_(eps), placement_(placement) {}

torch::Tensor RmsNorm::operator()(const torch::Tensor& x) const {
    const auto wtype = weight_.scalar_type();
    if (placement_.onCpuKernels() && x.scalar_type() == torch::kFloat32 && x.is_contiguous() && weight_.is_contiguous() &&
        (wtype == torch::kBFloat16 || wtype == torch::kFloat32)) {
        auto out = torch::empty_like(x);
        const auto d = x.size(-1), rows = x.numel() / d;
        if (wtype == torch::kFloat32)
            kernels::rmsNorm(x.data_ptr<float>(), weight_.data_ptr<float>(), out.data_ptr<float>(), rows, d, eps_);
        else
            kernels::rmsNorm(x.data_ptr<float>(), reinterpret_cast<const std::uint16_t*>(weight_.data_ptr()), out.data_ptr<float>(), rows,
                             d, eps_);
        return out;
    }
    auto normed = x * torch::rsqrt(x.pow(2).mean(-1, true) + eps_);
    return weight_.to(torch::kFloat32) * normed;
}

void RmsNorm::place(Placement placement) {
    placement_ = placement;
    if (!placement.onCpu() && weight_.defined()) weight_ = weight_.to(torchDevice(placement));
}

LayerNorm::LayerNorm(WeightBinder& weights, const std::string& prefix, std::int64_t dim, double eps)
    // Activations are float32: bf16 parameters (the bundled model's) widened once (exact; float32 ones are kept as
    // they are, autograd's included), so every call takes float32 parameters and residual() the fused kernel.
    : weight_(weights.take(prefix + "weight", {dim}).to(torch::kFloat32)),
      bias_(weights.take(prefix + "bias", {dim}).to(torch::kFloat32)),
      eps_(eps) {}

torch::Tensor LayerNorm::operator()(const torch::Tensor& x) const {
    return torch::layer_norm(x, {x.size(-1)}, weight_, bias_, eps_);
}

torch::Tensor LayerNorm::residual(const torch::Tensor& x, const torch::Tensor& h) const {
    const bool tracked = torch::GradMode::is_enabled() && (x.requires_grad() || h.requires_grad() || weight_.requires_grad());
    const auto f32 = torch::kFloat32;
    if (tracked || x.scalar_type() != f32 || h.scalar_type() != f32 || !x.is_contiguous() || !h.is_contiguous() || x.sizes() != h.sizes())
        return (*this)(x + h);
    auto out = torch::empty_like(x);
    const auto d = x.size(-1);
    kernels::addLayerNorm(x.data_ptr<float>(), h.data_ptr<float>(), weight_.data_ptr<float>(), bias_.data_ptr<float>(),
                          out.data_ptr<float>(), x.numel() / d, d, eps_);
    return out;
}

}  // namespace dragoman
