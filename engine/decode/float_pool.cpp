#include "decode/float_pool.h"

#include "util/error.h"

#include <algorithm>
#include <cstdlib>
#include <tuple>

namespace dragoman {

std::shared_ptr<FloatPool> FloatPool::make(std::string what, std::int64_t mostBytes) {
    return std::shared_ptr<FloatPool>(new FloatPool(std::move(what), mostBytes));
}

FloatPool::FloatPool(std::string what, std::int64_t mostBytes)
    : what_(std::move(what)), mostFloats_(mostBytes / static_cast<std::int64_t>(sizeof(float))) {}

FloatPool::~FloatPool() {
    for (const auto& [capacity, memory] : free_)
        std::free(memory);
}

std::shared_ptr<float[]> FloatPool::take(std::int64_t count) {
    float* memory = nullptr;
    std::int64_t capacity = std::max<std::int64_t>(count, 16);
    {
        std::lock_guard lock(mutex_);
        auto best = free_.end();
        for (auto it = free_.begin(); it != free_.end(); ++it)
            if (it->first >= count && it->first <= 2 * capacity && (best == free_.end() || it->first < best->first)) best = it;
        if (best != free_.end()) {
            std::tie(capacity, memory) = *best;
            floats_ -= capacity;
            free_.erase(best);
        }
    }
    if (!memory) {
        const auto bytes = static_cast<std::size_t>(capacity) * sizeof(float);
        memory = static_cast<float*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
        if (!memory) throw Error("memory", "no memory for " + std::to_string(bytes >> 20) + " MiB of " + what_);
    }
    return {memory, [pool = weak_from_this(), capacity](float* p) {
                if (const auto owner = pool.lock()) return owner->giveBack(capacity, p);
                std::free(p);
            }};
}

std::size_t FloatPool::bytesHeld() const {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(floats_) * sizeof(float);
}

void FloatPool::giveBack(std::int64_t capacity, float* memory) {
    {
        std::lock_guard lock(mutex_);
        if (floats_ + capacity <= mostFloats_) {
            floats_ += capacity;
            free_.emplace_back(capacity, memory);
            return;
        }
    }
    std::free(memory);
}

}  // namespace dragoman
