#pragma once
// A LoRA adapter as the layers apply it, unmerged: y = W x + scale * B (A x) for each Linear it targets, with
// A [r, in] and B [out, r] as the adapter file stores them (float32 or bf16, used as mapped). The base weights
// are never touched, so any number of adapters can be resident and each request picks one (or none).
#include <torch/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dragoman {
namespace cpu {
class Adapter;  // cpu/adapter_deltas.h
}

struct LoraDelta {
    torch::Tensor a, b;  // [r, in], [out, r]
    double scale = 1.0;
};

// One adapter bound to one model: a delta per Linear slot of that model (models number their Linears in a
// fixed order; an untargeted Linear has none).
class LoraSet {
public:
    LoraSet(std::string name, std::size_t slots) : name_(std::move(name)), deltas_(slots) {}

    const std::string& name() const { return name_; }
    const LoraDelta* at(int slot) const {
        return slot >= 0 && static_cast<std::size_t>(slot) < deltas_.size() && deltas_[slot] ? &*deltas_[slot] : nullptr;
    }
    void set(int slot, LoraDelta delta) { deltas_.at(static_cast<std::size_t>(slot)) = std::move(delta); }
    std::size_t targeted() const;
    std::int64_t bytes() const;  // adapter bytes one decoding step reads

private:
    std::string name_;
    std::vector<std::optional<LoraDelta>> deltas_;
};

// A LoraSet's deltas as the CPU forward reads them, one view per linear slot (models/hunyuan_cpu.h takes them
// through runtime/torch_backend.h).
std::shared_ptr<const cpu::Adapter> cpuAdapterOf(const LoraSet& set, std::size_t slots);

}  // namespace dragoman
