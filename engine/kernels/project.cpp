#include "models/ops.h"

namespace dragoman::ops {

torch::Tensor project(const torch::Tensor& x, const torch::Tensor& weight) {
    if (weight.scalar_type() == torch::kFloat32) return ops::linear(x, weight);
    return torch::matmul(x, weight.to(torch::kFloat32).t());  // placeholder until the bf16 kernel lands
}

}  // namespace dragoman::ops
