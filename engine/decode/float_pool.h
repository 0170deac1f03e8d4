#pragma once
// Float memory handed back for reuse: a decoder's caches, an encoder pass's keys and values, a step's logits. Fresh
// memory faults on every page it touches (a few microseconds each in a virtual machine, on the step's critical path);
// memory another request or step has just finished with is mapped and mostly still in cache.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace dragoman {

class FloatPool : public std::enable_shared_from_this<FloatPool> {
public:
    // `what` names the memory in the error thrown when there is none ("decoder caches").
    static std::shared_ptr<FloatPool> make(std::string what, std::int64_t mostBytes = std::int64_t{64} << 20);
    ~FloatPool();
    FloatPool(const FloatPool&) = delete;
    FloatPool& operator=(const FloatPool&) = delete;

    // At least `count` floats, 64-byte aligned, contents undefined: the smallest held buffer that takes them without
    // wasting as much again, else new memory. It comes back here when the last owner lets go, and is kept while the
    // pool holds at most `mostBytes` (freed otherwise, or when the pool is gone).
    std::shared_ptr<float[]> take(std::int64_t count);

    std::size_t bytesHeld() const;

private:
    FloatPool(std::string what, std::int64_t mostBytes);
    void giveBack(std::int64_t capacity, float* memory);

    const std::string what_;
    const std::int64_t mostFloats_;
    mutable std::mutex mutex_;
    std::vector<std::pair<std::int64_t, float*>> free_;  // capacity in floats, memory
    std::int64_t floats_ = 0;
};

}  // namespace dragoman
