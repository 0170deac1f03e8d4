#pragma once
// How many requests the server computes at once, and how many more may wait: a request beyond both is turned
// away at once (503), so a flood of clients never piles up unbounded work.
#include <condition_variable>
#include <memory>
#include <mutex>

namespace dragoman::server {

class AdmissionGate {
public:
    AdmissionGate(int running, int waiting) : maxRunning_(running), maxWaiting_(waiting) {}

    // A place to compute, held until the returned handle is destroyed; waits while all are taken. Null when the
    // waiting line is full too.
    std::shared_ptr<void> enter() {
        std::unique_lock lock(mutex_);
        if (running_ >= maxRunning_ && waiting_ >= maxWaiting_) return nullptr;
        ++waiting_;
        freed_.wait(lock, [this] { return running_ < maxRunning_; });
        --waiting_;
        ++running_;
        // Points at the gate (never null, never deleted): the deleter only gives the place back.
        return std::shared_ptr<void>(this, [this](void*) {
            {
                std::lock_guard released(mutex_);
                --running_;
            }
            freed_.notify_all();  // a waiting request, or waitIdle()
        });
    }

    // Blocks until nothing runs or waits (a server stopping lets its requests finish), or `timeout` has passed:
    // returns whether it is idle.
    template <typename Duration>
    bool waitIdleFor(Duration timeout) {
        std::unique_lock lock(mutex_);
        return freed_.wait_for(lock, timeout, [this] { return running_ == 0 && waiting_ == 0; });
    }
    void waitIdle() {
        std::unique_lock lock(mutex_);
        freed_.wait(lock, [this] { return running_ == 0 && waiting_ == 0; });
    }

private:
    const int maxRunning_, maxWaiting_;
    std::mutex mutex_;
    std::condition_variable freed_;
    int running_ = 0, waiting_ = 0;
};

}  // namespace dragoman::server
