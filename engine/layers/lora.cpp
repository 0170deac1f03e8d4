#include "layers/lora.h"

#include "cpu/adapter_deltas.h"
#include "layers/linear.h"

#include <torch/torch.h>

#include <optional>

namespace dragoman {

std::size_t LoraSet::targeted() const {
    std::size_t n = 0;
    for (const auto& d : deltas_)
        n += d.has_value();
    return n;
}

std::int64_t LoraSet::bytes() const {
    std::int64_t n = 0;
    for (const auto& d : deltas_)
        if (d) n += static_cast<std::int64_t>(d->a.nbytes() + d->b.nbytes());
    return n;
}

namespace {

// A LoraSet's deltas as the CPU forward reads them (cpu::Adapter), made when a model first runs a state with it.
class AdapterViews : public cpu::Adapter {
public:
    AdapterViews(const LoraSet& set, std::size_t slots) {
        for (std::size_t i = 0; i < slots; ++i) {
            const auto* d = set.at(static_cast<int>(i));
            if (d)
                deltas_.push_back(cpu::LowRank{ops::matrixOf(readable(d->a)), ops::matrixOf(readable(d->b)), d->scale});
            else
                deltas_.emplace_back();
        }
    }
    const cpu::LowRank* at(std::int64_t slot) const override {
        const auto i = static_cast<std::size_t>(slot);
        return i < deltas_.size() && deltas_[i] ? &*deltas_[i] : nullptr;
    }

private:
    // The adapter's own tensors where the kernels read them (float32 or bf16, contiguous), else a float32 copy kept here.
    torch::Tensor readable(const torch::Tensor& t) {
        if ((t.scalar_type() == torch::kFloat32 || t.scalar_type() == torch::kBFloat16) && t.is_contiguous() && t.device().is_cpu())
            return t;
        kept_.push_back(t.to(torch::kCPU, torch::kFloat32).contiguous());
        return kept_.back();
    }

    std::vector<std::optional<cpu::LowRank>> deltas_;
    std::vector<torch::Tensor> kept_;
};

}  // namespace

std::shared_ptr<const cpu::Adapter> cpuAdapterOf(const LoraSet& set, std::size_t slots) {
    return std::make_shared<const AdapterViews>(set, slots);
}

}  // namespace dragoman
