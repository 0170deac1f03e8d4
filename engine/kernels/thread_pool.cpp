#include "kernels/thread_pool.h"

#include "runtime/threads.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

namespace dragoman {
namespace {

// How long an idle worker keeps polling for the next job before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(200);

}  // namespace

ThreadPool::ThreadPool(int threads) {
    ranges_.resize(static_cast<std::size_t>(std::max(1, threads)));
    for (int i = 1; i < std::max(1, threads); ++i) workers_.emplace_back([this, i] { work(i); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

ThreadPool& ThreadPool::shared() {
    static ThreadPool pool(configureThreads());
    return pool;
}

void ThreadPool::work(int index) {
    std::uint64_t seen = 0;
    for (;;) {
        const auto spinUntil = std::chrono::steady_clock::now() + kSpin;
        for (int polls = 0; generation_.load(std::memory_order_acquire) == seen && !stopping_.load(std::memory_order_relaxed); ++polls) {
            if (polls % 64 == 63 && std::chrono::steady_clock::now() >= spinUntil) break;  // the clock is read rarely
            _mm_pause();
        }
        if (generation_.load(std::memory_order_acquire) == seen) {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_.load() || generation_.load() != seen; });
        }
        if (stopping_.load()) return;
        seen = generation_.load(std::memory_order_acquire);
        const auto range = ranges_[static_cast<std::size_t>(index)];
        if (range.second > range.first) (*job_)(range.first, range.second);
        pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
}

void ThreadPool::parallelFor(std::int64_t count, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& fn) {
    const auto threads = static_cast<std::int64_t>(size());
    grain = std::max<std::int64_t>(1, grain);
    const auto blocks = (count + grain - 1) / grain;
    if (threads == 1 || blocks < 2) {
        if (count > 0) fn(0, count);
        return;
    }
    std::lock_guard call(callMutex_);
    for (std::int64_t t = 0; t < threads; ++t) {
        const auto begin = std::min(count, (blocks * t / threads) * grain);
        const auto end = std::min(count, (blocks * (t + 1) / threads) * grain);
        ranges_[static_cast<std::size_t>(t)] = {begin, end};
    }
    job_ = &fn;
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    {
        // Under the mutex, so a worker about to sleep either sees the new generation or gets the notification.
        std::lock_guard lock(mutex_);
        generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    wake_.notify_all();
    const auto mine = ranges_[0];
    if (mine.second > mine.first) fn(mine.first, mine.second);
    while (pending_.load(std::memory_order_acquire) > 0) _mm_pause();
}

}  // namespace dragoman
