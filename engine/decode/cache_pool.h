#pragma once
// Decoder caches handed back when a sequence ends and given to the next sequence of the same shape. A fresh cache is
// fresh memory: every page it touches faults once (tens of microseconds each under these VMs' shadow paging; the
// bundled model's 480-line batch took ~5,000 such faults in its cache writes) and every line it writes is a miss,
// where a cache another sequence has just finished with is mapped and mostly in L2 or L3.
#include <torch/torch.h>

#include <cstddef>
#include <mutex>
#include <vector>

namespace dragoman {

class CachePool {
public:
    explicit CachePool(std::size_t maxBytes) : maxBytes_(maxBytes) {}

    // A tensor of these sizes and options: one handed back earlier if there is one, else a new one. Its contents are
    // whatever they were (callers write before they read, as with torch::empty).
    torch::Tensor take(c10::IntArrayRef sizes, const torch::TensorOptions& options);

    // Keeps `cache` for a later take() while the pool holds less than maxBytes and nothing else (a view, a copy of
    // the handle) shares its storage; otherwise it is freed as usual.
    void giveBack(torch::Tensor cache);

    std::size_t bytesHeld() const;

private:
    mutable std::mutex mutex_;
    std::vector<torch::Tensor> free_;
    std::size_t bytes_ = 0, maxBytes_;
};

}  // namespace dragoman
