#pragma once
// A CPU model's views of its requests' LoRA adapters as the forward passes read them (cpu::Adapter): one per resident
// adapter, made on first use through libtorch's side (the adapter's tensors live there) and shared by every request
// that runs with it, so rows of one adapter in a batched step share its products. A view is forgotten once its
// adapter is no longer held anywhere.
#include "cpu/adapter_deltas.h"

#include <map>
#include <memory>
#include <mutex>

namespace dragoman {

class LoraSet;

class AdapterViews {
public:
    explicit AdapterViews(std::size_t slots) : slots_(slots) {}
    // The view of `adapter` over the model's `slots` linear layers; null for none.
    std::shared_ptr<const cpu::Adapter> of(const std::shared_ptr<const LoraSet>& adapter) const;

private:
    std::size_t slots_;
    mutable std::mutex mutex_;
    mutable std::map<const LoraSet*, std::pair<std::weak_ptr<const LoraSet>, std::shared_ptr<const cpu::Adapter>>> views_;
};

}  // namespace dragoman
