#include "layers/rotary.h"

#include "kernels/rope.h"
#include "layers/torch_device.h"

#include <torch/torch.h>

namespace dragoman {
namespace {

torch::Tensor rotateHalf(const torch::Tensor& x) {
    const auto half = x.size(-1) / 2;
    return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

Rotary::Rotary(std::int64_t headDim, double base, Placement placement) : placement_(placement) {
    auto exponents = torch::arange(0, headDim, 2, torch::kInt64).to(torch::kFloat32) / static_cast<double>(headDim);
    invFreq_ = (1.0 / torch::pow(base, exponents)).to(torchDevice(placement));
}

Rotary::Angles Rotary::at(std::int64_t start, std::int64_t count) const {
    auto positions = torch::arange(start, start + count, torch::TensorOptions().dtype(torch::kInt64).device(torchDevice(placement_)));
    auto angles = torch::outer(positions.to(torch::kFloat32), invFreq_);
    auto emb = torch::cat({angles, angles}, -1);
    return {emb.cos(), emb.sin()};
}

torch::Tensor Rotary::operator()(const torch::Tensor& x, const Angles& a) const {
    if (!placement_.onCpuKernels()) return x * a.cos + rotateHalf(x) * a.sin;
    auto rows = x.contiguous();  // no copy for one position
    kernels::applyRope(rows.data_ptr<float>(), rows.size(0) * rows.size(1), rows.size(2), a.cos.data_ptr<float>(), a.sin.data_ptr<float>(),
                       rows.size(1));
    return rows;
}

torch::Tensor Rotary::eachRow(const torch::Tensor& x, std::int64_t heads, const std::vector<Angles>& angles) const {
    TORCH_CHECK(placement_.onCpuKernels() && x.is_contiguous() && x.scalar_type() == torch::kFloat32,
                "Rotary::eachRow: the CPU kernels' float32 rows, contiguous");
    const auto rows = x.size(0), d = x.size(1) / heads;
    for (std::int64_t b = 0; b < rows; ++b) {
        const auto& a = angles[static_cast<std::size_t>(b)];
        kernels::applyRope(x.data_ptr<float>() + b * heads * d, heads, d, a.cos.data_ptr<float>(), a.sin.data_ptr<float>(), 1);
    }
    return x;
}

void Rotary::place(Placement placement) {
    placement_ = placement;
    invFreq_ = invFreq_.to(torchDevice(placement));
}

}  // namespace dragoman
