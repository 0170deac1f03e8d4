#include "layers/embedding.h"

#include "layers/linear.h"
#include "layers/torch_device.h"

#include <torch/torch.h>

namespace dragoman {

Embedding::Embedding(WeightBinder& weights, const std::string& name, std::int64_t vocab, std::int64_t dim, Placement placement)
    : weight_(weights.take(name, {vocab, dim})), placement_(placement) {
    storedScale_ = weights.takeScale(name, weight_, vocab);
    if (!storedScale_.defined()) return;
    scale_ = storedScale_.to(torch::kFloat32).reshape({-1});
    if (weight_.defined() && weight_.scalar_type() != torch::kInt8 && weight_.scalar_type() != torch::kUInt8)
        weights.reject(name + "_scale scales " + name + ", which is not an 8-bit table");
}

torch::Tensor Embedding::operator()(const torch::Tensor& ids, double scale) const {
    // Decoding steps call this per token: the device copy (and its dispatch) only where the ids are elsewhere.
    const auto onDevice = ids.device() == weight_.device() ? ids : ids.to(weight_.device());
    torch::Tensor x;
    if (!scale_.defined()) {
        x = torch::embedding(weight_, onDevice).to(torch::kFloat32);
    } else {
        // Codes times their row's scale, one float32 rounding: exactly the dequantized table's row.
        const auto flat = onDevice.reshape({-1});
        auto rows = ops::floatWeight(weight_.index_select(0, flat));
        rows.mul_(scale_.numel() == 1 ? scale_ : scale_.index_select(0, flat).unsqueeze(1));
        auto sizes = onDevice.sizes().vec();
        sizes.push_back(weight_.size(1));
        x = rows.view(sizes);
    }
    return scale == 1.0 ? x : x * scale;
}

void Embedding::place(Placement placement) {
    placement_ = placement;
    if (placement.onCpu()) return;
    weight_ = weight_.to(torchDevice(placement));
    if (scale_.defined()) scale_ = scale_.to(torchDevice(placement));
}

}  // namespace dragoman
