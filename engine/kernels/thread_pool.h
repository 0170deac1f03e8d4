#pragma once
// A small fixed pool for the compute kernels: parallelFor splits [0, count) into one contiguous range per
// thread and runs them at once, the caller taking the first. A decoding step makes hundreds of short calls
// back to back, so idle workers spin briefly before they sleep: waking a sleeping thread costs tens of
// microseconds, as long as a whole small projection takes.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace dragoman {

class ThreadPool {
public:
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return static_cast<int>(workers_.size()) + 1; }
    // fn(begin, end) over disjoint ranges covering [0, count), rounded to multiples of `grain`.
    void parallelFor(std::int64_t count, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& fn);

    // The kernels' pool: as many threads as configureThreads() gave BLAS (set once, on the engine thread).
    static ThreadPool& shared();

private:
    void work(int index);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    const std::function<void(std::int64_t, std::int64_t)>* job_ = nullptr;
    std::vector<std::pair<std::int64_t, std::int64_t>> ranges_;
    std::atomic<std::uint64_t> generation_{0};
    std::atomic<int> pending_{0};
    std::atomic<bool> stopping_{false};
    std::mutex callMutex_;  // one parallelFor at a time
};

}  // namespace dragoman
