#include "kernels/thread_pool.h"

#include "kernels/threads.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>

namespace dragoman {
namespace {

// How long an idle worker keeps polling for the next job before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(200);

}  // namespace

ThreadPool::ThreadPool(int threads) {
    for (int i = 1; i < std::max(1, threads); ++i)
        workers_.emplace_back([this] { work(); });
}

ThreadPool::~ThreadPool() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_)
        t.join();
}

ThreadPool& ThreadPool::shared() {
    static ThreadPool pool(configureThreads());
    return pool;
}

void ThreadPool::work() {
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
        runChunks();
        pending_.fetch_sub(1, std::memory_order_acq_rel);
    }
}

void ThreadPool::parallelFor(std::int64_t count, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& fn) {
    const auto threads = static_cast<std::int64_t>(size());
    grain = std::max<std::int64_t>(1, grain);
    if (threads == 1 || count <= grain) {
        if (count > 0) fn(0, count);
        return;
    }
    std::lock_guard call(callMutex_);
    count_ = count;
    grain_ = grain;
    next_.store(0, std::memory_order_relaxed);
    job_ = &fn;
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    {
        // Under the mutex, so a worker about to sleep either sees the new generation or gets the notification.
        std::lock_guard lock(mutex_);
        generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    wake_.notify_all();
    runChunks();
    while (pending_.load(std::memory_order_acquire) > 0)
        _mm_pause();
}

// Chunks are claimed in ascending order, so each thread still streams forward through the weights.
void ThreadPool::runChunks() {
    for (;;) {
        const auto begin = next_.fetch_add(grain_, std::memory_order_relaxed);
        if (begin >= count_) return;
        (*job_)(begin, std::min(count_, begin + grain_));
    }
}

}  // namespace dragoman
