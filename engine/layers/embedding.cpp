#include "layers/embedding.h"

#include <torch/torch.h>

namespace dragoman {

Embedding::Embedding(WeightBinder& weights, const std::string& name, std::int64_t vocab, std::int64_t dim, Placement placement)
    : weight_(weights.take(name, {vocab, dim})), placement_(placement) {}

torch::Tensor Embedding::operator()(const torch::Tensor& ids, double scale) const {
    // Decoding steps call this per token: the device copy (and its dispatch) only where the ids are elsewhere.
    const auto onDevice = ids.device() == weight_.device() ? ids : ids.to(weight_.device());
    auto x = torch::embedding(weight_, onDevice).to(torch::kFloat32);
    return scale == 1.0 ? x : x * scale;
}

void Embedding::place(Placement placement) {
    placement_ = placement;
    if (!placement.device.is_cpu()) weight_ = weight_.to(placement.device);
}

}  // namespace dragoman
