#pragma once
// Thread pools are sized once per process, on the engine thread, before any inference.
#include <cstdint>
#include <functional>

namespace dragoman {

// `threads` <= 0: $DRAGOMAN_THREADS, else the number of online CPUs. That many threads go to the engine's
// kernel pool (kernels/thread_pool.h), which does the heavy products. ATen's OpenMP pool gets one thread
// unless $DRAGOMAN_ATEN_THREADS says more: on 2 cores its spin-waiting workers and OpenBLAS's took turns and
// halved decoding speed (opus-mt-base shapes: 34 tokens/s with both pools at 2, 69 with ATen at 1). OpenBLAS
// runs on one thread outside a ParallelBlas scope (below). Later calls do nothing. Returns the thread count
// in force.
int configureThreads(int threads = 0);

// After a library with pools of its own is opened (libtorch's side, runtime/torch_backend.h): looks its setters up
// again and gives them what configureThreads() gave (nothing before configureThreads()).
void configureLoadedLibraries();

// OpenBLAS's workers spin (sched_yield) for about 0.1 s after every call they share, and with one core per
// kernel-pool thread they take cores from the engine's kernels: with them on, a HY-MT 1.8B prompt took 15%
// longer and OPUS-MT greedy decoding ran at 67-70 instead of 79 tokens/s (2 cores). So OpenBLAS gets all
// threads only for a product big enough to pay for that (a long prompt's attention, a float32 prompt or
// encoder projection), inside this scope; nested scopes are fine. Only the engine thread makes products.
// Before configureThreads() the scope does nothing.
class ParallelBlas {
public:
    // Worth it from about this many multiply-adds on: a 64-row product of 512 x 512 weights.
    static constexpr std::int64_t kMinMultiplyAdds = std::int64_t{64} * 512 * 512;

    explicit ParallelBlas(std::int64_t multiplyAdds = kMinMultiplyAdds);
    ~ParallelBlas();
    ParallelBlas(const ParallelBlas&) = delete;
    ParallelBlas& operator=(const ParallelBlas&) = delete;

private:
    bool active_ = false;
};

// oneDNN (kernels/onednn_matmul.h) runs on OpenMP, which configureThreads() leaves at ATen's one thread on the
// engine thread: inside this scope OpenMP gets the kernel pool's thread count. Before configureThreads() it
// does nothing.
// Runs body(part, parts) once on each thread of an OpenMP team of the kernel pool's size (libgomp's
// GOMP_parallel, looked up at run time like the setters above), or body(0, 1) on the calling thread where there is
// no such team. For work between oneDNN products: their OpenMP workers spin for milliseconds waiting for the next
// one, and would take the cores from any other pool. The body must not throw.
void onOpenMpTeam(const std::function<void(int part, int parts)>& body);

class ParallelOpenMp {
public:
    ParallelOpenMp();
    ~ParallelOpenMp();
    ParallelOpenMp(const ParallelOpenMp&) = delete;
    ParallelOpenMp& operator=(const ParallelOpenMp&) = delete;

private:
    int previous_ = 0;
};

}  // namespace dragoman
