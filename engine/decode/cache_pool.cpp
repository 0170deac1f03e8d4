#include "decode/cache_pool.h"

#include <algorithm>
#include <iterator>

namespace dragoman {

torch::Tensor CachePool::take(c10::IntArrayRef sizes, const torch::TensorOptions& options) {
    const bool inference = c10::InferenceMode::is_enabled();
    {
        std::lock_guard lock(mutex_);
        // The most recently handed back first: its lines are the likeliest to be in cache.
        const auto same = std::find_if(free_.rbegin(), free_.rend(), [&](const torch::Tensor& t) {
            // An inference tensor refuses libtorch's in-place operations (a beam's reorder) outside InferenceMode,
            // so a cache made in one mode only serves the same mode.
            return t.sizes() == sizes && t.dtype() == options.dtype() && t.device() == options.device() && t.is_inference() == inference;
        });
        if (same != free_.rend()) {
            auto cache = std::move(*same);
            free_.erase(std::next(same).base());
            bytes_ -= cache.nbytes();
            return cache;
        }
    }
    return torch::empty(sizes, options);
}

void CachePool::giveBack(torch::Tensor cache) {
    if (!cache.defined() || !cache.is_contiguous() || cache.storage_offset() != 0 || cache.use_count() != 1 ||
        cache.storage().use_count() != 1)
        return;
    std::lock_guard lock(mutex_);
    if (bytes_ + cache.nbytes() > maxBytes_) return;
    bytes_ += cache.nbytes();
    free_.push_back(std::move(cache));
}

std::size_t CachePool::bytesHeld() const {
    std::lock_guard lock(mutex_);
    return bytes_;
}

}  // namespace dragoman
