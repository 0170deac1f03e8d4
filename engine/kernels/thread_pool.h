#pragma once
// A small fixed pool for the compute kernels: parallelFor cuts [0, count) into grain-sized chunks, gives each thread
// (the caller first, then the workers) an equal run of consecutive chunks, and lets a thread that has finished its
// run take what is left of the others' from their ends, so a thread slowed by another process (the machines are
// shared) does not leave the others spinning at the end of every call. Runs rather than chunks dealt in turn: a
// call repeated with the same shape (every layer of every decoding step) hands each thread the same weights each
// time, which then stay in its core's caches (its own L3, where a VM's cores sit on different dies); dealt in turn,
// every thread read every weight sooner or later, and two cores on different dies each missed on half of them at
// every call. A decoding step makes hundreds of short calls back to back, so idle workers spin briefly before they
// sleep: waking a sleeping thread costs tens of microseconds, as long as a whole small projection takes. The caller
// waits only for workers that are running one of its chunks, never for one still waking up (or preempted before it
// took any): with more request threads than cores, a worker can wait milliseconds for a core, and the caller has
// done its chunks by then.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <exception>
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
    // fn(begin, end) over disjoint chunks covering [0, count), each `grain` long (the last may be shorter);
    // a thread may run several chunks. With one thread, a count within one grain, or from inside another
    // parallelFor's fn, fn(0, count) runs inline. What fn throws (on any thread) comes out of the call once every
    // chunk under way has ended; chunks not yet claimed then do not run.
    void parallelFor(std::int64_t count, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& fn);

    // The kernels' pool: as many threads as configureThreads() gave BLAS (set once, on the engine thread).
    static ThreadPool& shared();
    // The grain for rows of `width` values each: about 16 K values a claim, so an encoder pass's hundreds of rows go
    // to every thread and a decoding step's few run on the caller's (parallelFor runs a single grain inline).
    static std::int64_t rowsPerClaim(std::int64_t width);

private:
    void work(int index);
    // Claims and runs chunks: first those of thread `index`'s run from its start, then the others' from their ends.
    void runChunks(int index);
    // Runs one chunk, keeping the first exception a chunk throws for the caller.
    void runChunk(std::int64_t chunk);

    std::vector<std::thread> workers_;
    std::mutex mutex_;
    std::condition_variable wake_;
    const std::function<void(std::int64_t, std::int64_t)>* job_ = nullptr;
    std::int64_t count_ = 0, grain_ = 1;
    // Each thread's run of unclaimed chunks, [first, end) as chunk numbers in one word (first in the low half), so
    // that its owner claiming at the front and another thread at the back never take the same chunk; a cache line
    // each (claims from two threads would otherwise share one).
    struct alignas(64) Run {
        std::atomic<std::uint64_t> chunks{0};
    };
    std::vector<Run> runs_;
    std::atomic<bool> failed_{false};  // a chunk threw: no more are claimed
    std::mutex failureMutex_;
    std::exception_ptr failure_;
    std::atomic<std::uint64_t> generation_{0};
    // A worker counts itself active before it looks at the job and takes chunks only while the job is open; the
    // caller closes the job once every chunk is claimed and waits for the active count to reach zero.
    std::atomic<int> active_{0};
    std::atomic<bool> open_{false};
    std::atomic<bool> stopping_{false};
    std::mutex callMutex_;  // one parallelFor at a time
};

}  // namespace dragoman
