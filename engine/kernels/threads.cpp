#include "kernels/threads.h"

#include "util/log.h"
#include "util/overrides.h"

#include <dlfcn.h>
#include <malloc.h>
#include <atomic>
#include <cstdlib>
#include <mutex>
#include <thread>

namespace dragoman {
namespace {

using SetBlasThreads = void (*)(int);

// OpenBLAS keeps its own pool; its setter is looked up at run time so any BLAS works (others: a no-op).
SetBlasThreads blasSetter() {
    static const auto set = reinterpret_cast<SetBlasThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    return set;
}

// ATen's thread counts, where libtorch is loaded (at::set_num_threads, at::set_num_interop_threads): looked up like
// OpenBLAS's setter, so the kernels link no libtorch and a process that never loads it skips them.
struct Aten {
    void (*setThreads)(int) = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_DEFAULT, "_ZN2at15set_num_threadsEi"));
    void (*setInteropThreads)(int) = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_DEFAULT, "_ZN2at23set_num_interop_threadsEi"));
};

// libgomp is loaded with libtorch; looked up like OpenBLAS's setter, so nothing links it directly.
struct OpenMp {
    void (*set)(int) = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    int (*get)() = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    // What `#pragma omp parallel num_threads(n)` compiles to with GCC, and the team's own numbers.
    void (*parallel)(void (*)(void*), void*, unsigned,
                     unsigned) = reinterpret_cast<void (*)(void (*)(void*), void*, unsigned, unsigned)>(::dlsym(RTLD_DEFAULT,
                                                                                                                "GOMP_parallel"));
    int (*threadNum)() = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
    int (*numThreads)() = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
};

const OpenMp& openMp() {
    static const OpenMp api;
    return api;
}

std::atomic<int> threadsInForce{0};
int parallelBlasDepth = 0;  // engine thread only

}  // namespace

int configureThreads(int threads) {
    static std::once_flag once;
    std::call_once(once, [&] {
        int n = threads;
        if (n <= 0) n = environmentOverrides().threads;
        if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        // Every decoding step makes and frees the same few hundred KiB to MiB tensors, and a long prompt's activations
        // are tensors of megabytes made and freed in every layer. glibc hands such blocks back to the kernel (mmap, or
        // trimming the heap) and the next step or layer faults the pages in again, zeroed: a seventh of the bundled
        // model's translate time, a tenth of a 500-token prompt's. Blocks under 64 MiB stay in the heap, and up to
        // 256 MiB of free heap is kept for reuse.
        mallopt(M_MMAP_THRESHOLD, 64 << 20);
        mallopt(M_TRIM_THRESHOLD, 256 << 20);
        const int atenThreads = environmentOverrides().atenThreads;
        const Aten aten;
        if (aten.setThreads) aten.setThreads(atenThreads);
        if (auto set = blasSetter()) set(1);
        try {
            // One request at a time: intra-op parallelism is what counts.
            if (aten.setInteropThreads) aten.setInteropThreads(1);
        } catch (const std::exception&) {
            // Already started by an earlier parallel op; harmless.
        }
        threadsInForce = n;
        log::logger().info("threads: {} for the kernels, {} for ATen, OpenBLAS 1 (all {} for large products)", n, atenThreads, n);
    });
    return threadsInForce;
}

ParallelBlas::ParallelBlas(std::int64_t multiplyAdds) {
    // Before configureThreads() (a tool that sets its own pools, such as tools/train) the scope changes nothing.
    if (multiplyAdds < kMinMultiplyAdds || threadsInForce <= 1 || !blasSetter()) return;
    active_ = true;
    if (parallelBlasDepth++ == 0) blasSetter()(threadsInForce);
}

ParallelBlas::~ParallelBlas() {
    if (active_ && --parallelBlasDepth == 0) blasSetter()(1);
}

void onOpenMpTeam(const std::function<void(int part, int parts)>& body) {
    const auto& omp = openMp();
    const int n = threadsInForce;
    if (n <= 1 || !omp.parallel || !omp.threadNum || !omp.numThreads) return body(0, 1);
    struct Call {
        const std::function<void(int, int)>* body;
        const OpenMp* omp;
    } call{&body, &omp};
    omp.parallel(
        [](void* data) {
            const auto* c = static_cast<const Call*>(data);
            (*c->body)(c->omp->threadNum(), c->omp->numThreads());
        },
        &call, static_cast<unsigned>(n), 0);
}

ParallelOpenMp::ParallelOpenMp() {
    const auto& omp = openMp();
    if (threadsInForce <= 1 || !omp.set || !omp.get) return;
    previous_ = omp.get();
    if (previous_ != threadsInForce) omp.set(threadsInForce);
}

ParallelOpenMp::~ParallelOpenMp() {
    if (previous_ > 0 && previous_ != threadsInForce) openMp().set(previous_);
}

}  // namespace dragoman
