#include "layers/weights.h"

#include "cpu/checkpoint_binder.h"
#include "util/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <torch/torch.h>

namespace dragoman {

const WeightTable& WeightBinder::empty() {
    static const WeightTable none;
    return none;
}

torch::Tensor WeightBinder::take(const std::string& name, const std::vector<std::int64_t>& shape) {
    if (layout_) {
        layout_->emplace_back(name, shape);
        return torch::zeros(shape);
    }
    auto it = table_.find(name);
    if (it == table_.end()) {
        missing_.push_back(name);
        return {};
    }
    used_.insert(name);
    if (it->second.sizes().vec() != shape) {
        misshapen_.push_back(fmt::format("{} is [{}], expected [{}]", name, fmt::join(it->second.sizes(), ","), fmt::join(shape, ",")));
        return {};
    }
    return it->second;
}

torch::Tensor WeightBinder::takeOptional(const std::string& name, const std::vector<std::vector<std::int64_t>>& shapes) {
    auto it = table_.find(name);
    if (it == table_.end()) return {};
    used_.insert(name);
    for (const auto& shape : shapes)
        if (it->second.sizes().vec() == shape) return it->second;
    misshapen_.push_back(
        fmt::format("{} is [{}], expected one of {}", name, fmt::join(it->second.sizes(), ","), fmt::join(shapes, " or ")));
    return {};
}

torch::Tensor WeightBinder::takeScale(const std::string& weightName, const torch::Tensor& weight, std::int64_t rows) {
    auto scale = takeOptional(weightName + "_scale", {{rows, 1}, {1}, {}});
    const auto type = weight.defined() ? weight.scalar_type() : torch::kFloat32;
    if ((type == torch::kInt8 || type == torch::kUInt8) && !scale.defined())
        reject(weightName + " is 8-bit but has no " + weightName + "_scale");
    return scale;
}

void WeightBinder::acceptAlias(const std::string& name, const torch::Tensor& original) {
    if (layout_) return;  // an alias is optional: not part of the layout
    auto it = table_.find(name);
    if (it == table_.end()) return;
    used_.insert(name);
    if (!original.defined() || it->second.sizes() != original.sizes() || !torch::equal(it->second, original.to(it->second.scalar_type())))
        misshapen_.push_back(name + " is stored but differs from the tensor it must equal");
}

void WeightBinder::finish(const std::string& modelId) const {
    if (layout_) return;
    std::vector<std::string> unexpected;
    for (const auto& [name, tensor] : table_)
        if (!used_.count(name)) unexpected.push_back(name);
    cpu::throwBindingProblems(modelId, missing_, misshapen_, unexpected);
}

}  // namespace dragoman
