#include "kernels/thread_pool.h"

#include "kernels/thread_roles.h"
#include "kernels/threads.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <thread>

namespace dragoman {
namespace {

// How long an idle worker keeps polling for the next job before it sleeps.
constexpr auto kSpin = std::chrono::microseconds(200);

// One poll of a wait expected to be short: a few microseconds of pause instructions, then the core is offered to
// any other runnable thread at each poll. A server's request threads, or a batch's, outnumber the cores: a
// worker that only spins keeps them from the core while they have the next step to prepare, and a caller that
// only spins for a worker that was preempted keeps that worker from finishing.
void politePause(int polls) {
    if (polls < 256)
        _mm_pause();
    else
        std::this_thread::yield();
}

// Set while a thread runs a job's chunks: a parallelFor from inside one (a kernel called by a task the pool runs)
// runs inline, where waiting for the pool it is part of would never end.
thread_local bool insideJob = false;

struct InsideJob {
    InsideJob() { insideJob = true; }
    ~InsideJob() { insideJob = false; }
};

}  // namespace

ThreadPool::ThreadPool(int threads) : runs_(static_cast<std::size_t>(std::max(1, threads))) {
    for (int i = 1; i < std::max(1, threads); ++i)
        workers_.emplace_back([this, i] { work(i); });
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

std::int64_t ThreadPool::rowsPerClaim(std::int64_t width) {
    constexpr std::int64_t kValuesPerClaim = std::int64_t{16} << 10;
    return std::max<std::int64_t>(1, kValuesPerClaim / std::max<std::int64_t>(1, width));
}

ThreadPool& ThreadPool::shared() {
    static ThreadPool pool(configureThreads());
    return pool;
}

void ThreadPool::work(int index) {
    runAsKernelThread();
    std::uint64_t seen = 0;
    for (;;) {
        const auto spinUntil = std::chrono::steady_clock::now() + kSpin;
        for (int polls = 0; generation_.load(std::memory_order_acquire) == seen && !stopping_.load(std::memory_order_relaxed); ++polls) {
            if (polls % 64 == 63 && std::chrono::steady_clock::now() >= spinUntil) break;  // the clock is read rarely
            politePause(polls);
        }
        if (generation_.load(std::memory_order_acquire) == seen) {
            std::unique_lock lock(mutex_);
            wake_.wait(lock, [&] { return stopping_.load() || generation_.load() != seen; });
        }
        if (stopping_.load()) return;
        seen = generation_.load(std::memory_order_acquire);
        // Sequentially consistent with the caller's close-then-count: either this worker sees the job closed and
        // leaves it alone, or the caller sees it active and waits for it. An open job may be a newer one than
        // `seen` (this worker was slow): its chunks are as good to take.
        active_.fetch_add(1, std::memory_order_seq_cst);
        if (open_.load(std::memory_order_seq_cst)) runChunks(index);
        active_.fetch_sub(1, std::memory_order_release);
    }
}

void ThreadPool::parallelFor(std::int64_t count, std::int64_t grain, const std::function<void(std::int64_t, std::int64_t)>& fn) {
    const auto threads = static_cast<std::int64_t>(size());
    grain = std::max<std::int64_t>(1, grain);
    if (threads == 1 || count <= grain || insideJob) {
        if (count > 0) fn(0, count);
        return;
    }
    const std::int64_t chunks = (count + grain - 1) / grain;
    if (chunks > std::int64_t{0xFFFFFFFF}) {  // more than a run's halves can number (no caller comes near)
        for (std::int64_t begin = 0; begin < count; begin += grain)
            fn(begin, std::min(count, begin + grain));
        return;
    }
    std::lock_guard call(callMutex_);
    // Written while the previous job is closed, which no worker reads; opening publishes them. Rounded up, so that
    // with fewer chunks than threads the caller's run is not the empty one.
    count_ = count;
    grain_ = grain;
    const auto start = [&](std::int64_t t) { return static_cast<std::uint64_t>((t * chunks + threads - 1) / threads); };
    for (std::int64_t t = 0; t < threads; ++t)
        runs_[static_cast<std::size_t>(t)].chunks.store(start(t) | start(t + 1) << 32, std::memory_order_relaxed);
    failed_.store(false, std::memory_order_relaxed);
    job_ = &fn;
    open_.store(true, std::memory_order_seq_cst);
    {
        // Under the mutex, so a worker about to sleep either sees the new generation or gets the notification.
        std::lock_guard lock(mutex_);
        generation_.fetch_add(1, std::memory_order_acq_rel);
    }
    wake_.notify_all();
    runChunks(0);
    // Every chunk is claimed: close, then wait for the workers still running theirs.
    open_.store(false, std::memory_order_seq_cst);
    for (int polls = 0; active_.load(std::memory_order_seq_cst) > 0; ++polls)
        politePause(polls);
    if (failed_.load(std::memory_order_acquire)) {
        std::exception_ptr failure;
        {
            std::lock_guard lock(failureMutex_);
            std::swap(failure, failure_);
        }
        std::rethrow_exception(failure);
    }
}

// A thread's own run is claimed from its first chunk on, so each thread streams forward through its weights; the
// others' from their last, the chunks their owners would come to last.
void ThreadPool::runChunks(int index) {
    const InsideJob inside;
    const auto threads = runs_.size();
    const auto claim = [&](Run& run, bool front) -> std::int64_t {
        auto bounds = run.chunks.load(std::memory_order_relaxed);
        for (;;) {
            const auto first = bounds & 0xFFFFFFFF, end = bounds >> 32;
            if (first >= end || failed_.load(std::memory_order_relaxed)) return -1;
            const auto claimed = front ? bounds + 1 : bounds - (std::uint64_t{1} << 32);
            if (run.chunks.compare_exchange_weak(bounds, claimed, std::memory_order_relaxed))
                return static_cast<std::int64_t>(front ? first : end - 1);
        }
    };
    for (std::size_t i = 0; i < threads; ++i) {
        auto& run = runs_[(static_cast<std::size_t>(index) + i) % threads];
        for (std::int64_t chunk; (chunk = claim(run, i == 0)) >= 0;)
            runChunk(chunk);
    }
}

void ThreadPool::runChunk(std::int64_t chunk) {
    const auto begin = chunk * grain_;
    try {
        (*job_)(begin, std::min(count_, begin + grain_));
    } catch (...) {
        std::lock_guard lock(failureMutex_);
        if (!failure_) failure_ = std::current_exception();
        failed_.store(true, std::memory_order_release);
    }
}

}  // namespace dragoman
