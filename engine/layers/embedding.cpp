#include "layers/embedding.h"

#include <torch/torch.h>

namespace dragoman {

Embedding::Embedding(WeightBinder& weights, const std::string& name, std::int64_t vocab, std::int64_t dim, Placement placement)
    : weight_(weights.take(name, {vocab, dim})), placement_(placement) {}

torch::Tensor Embedding::operator()(const torch::Tensor& ids, double scale) const {
    auto x = torch::embedding(weight_, ids.to(placement_.device)).to(torch::kFloat32);
    return scale == 1.0 ? x : x * scale;
}

void Embedding::place(Placement placement) {
    placement_ = placement;
    if (!placement.device.is_cpu()) weight_ = weight_.to(placement.device);
}

}  // namespace dragoman
