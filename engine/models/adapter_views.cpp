#include "models/adapter_views.h"

#include "runtime/torch_backend.h"

namespace dragoman {

std::shared_ptr<const cpu::Adapter> AdapterViews::of(const std::shared_ptr<const LoraSet>& adapter) const {
    if (!adapter) return nullptr;
    std::lock_guard lock(mutex_);
    auto& entry = views_[adapter.get()];
    // The address may be a new adapter's where an old one was freed: the weak pointer tells them apart.
    if (entry.first.lock() != adapter) entry = {adapter, torchBackend().cpuAdapterOf(*adapter, slots_)};
    auto view = entry.second;
    std::erase_if(views_, [](const auto& e) { return e.second.first.expired(); });  // adapters no longer resident
    return view;
}

}  // namespace dragoman
