#include "kernels/threads.h"

#include "util/log.h"
#include "util/overrides.h"

#include <dlfcn.h>
#include <malloc.h>
#include <atomic>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <thread>

namespace dragoman {
namespace {

using SetBlasThreads = void (*)(int);

// ATen's thread counts (at::set_num_threads, at::set_num_interop_threads), OpenBLAS's and libgomp's setters:
// looked up at run time in what the process has loaded, so the kernels link none of them (any BLAS works, others
// being a no-op) and a process that never loads libtorch skips them. Looked up again once libtorch's side is opened
// (configureLoadedLibraries).
struct Lookups {
    SetBlasThreads blas = reinterpret_cast<SetBlasThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"));
    void (*atenThreads)(int) = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_DEFAULT, "_ZN2at15set_num_threadsEi"));
    void (*atenInteropThreads)(int) = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_DEFAULT, "_ZN2at23set_num_interop_threadsEi"));
    void (*ompSet)(int) = reinterpret_cast<void (*)(int)>(::dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
    int (*ompGet)() = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
    // What `#pragma omp parallel num_threads(n)` compiles to with GCC, and the team's own numbers.
    void (*ompParallel)(void (*)(void*), void*, unsigned,
                        unsigned) = reinterpret_cast<void (*)(void (*)(void*), void*, unsigned, unsigned)>(::dlsym(RTLD_DEFAULT,
                                                                                                                   "GOMP_parallel"));
    int (*ompThreadNum)() = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "omp_get_thread_num"));
    int (*ompNumThreads)() = reinterpret_cast<int (*)()>(::dlsym(RTLD_DEFAULT, "omp_get_num_threads"));
};

std::mutex lookupsMutex;
std::atomic<const Lookups*> currentLookups{nullptr};

// A refresh keeps the earlier tables (a reader may hold one): one per library opened, for the whole process.
const Lookups& lookups(bool refresh = false) {
    if (const auto* p = currentLookups.load(std::memory_order_acquire); p && !refresh) return *p;
    std::lock_guard lock(lookupsMutex);
    static auto* tables = new std::deque<Lookups>;  // never destroyed: a thread may look up during exit
    if (refresh || !currentLookups.load()) currentLookups.store(&tables->emplace_back(), std::memory_order_release);
    return *currentLookups.load(std::memory_order_acquire);
}

SetBlasThreads blasSetter() {
    return lookups().blas;
}

// ATen gets its thread count, OpenBLAS one thread (more inside ParallelBlas), one inter-op thread.
void configureLibraryPools(const Lookups& found) {
    if (found.atenThreads) found.atenThreads(environmentOverrides().atenThreads);
    if (found.blas) found.blas(1);
    try {
        // One request at a time: intra-op parallelism is what counts.
        if (found.atenInteropThreads) found.atenInteropThreads(1);
    } catch (const std::exception&) {
        // Already started by an earlier parallel op; harmless.
    }
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
        configureLibraryPools(lookups());
        threadsInForce = n;
        log::logger().info("threads: {} for the kernels, {} for ATen, OpenBLAS 1 (all {} for large products)", n,
                           environmentOverrides().atenThreads, n);
    });
    return threadsInForce;
}

void configureLoadedLibraries() {
    const auto& found = lookups(true);
    if (threadsInForce > 0) configureLibraryPools(found);
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
    const auto& omp = lookups();
    const int n = threadsInForce;
    if (n <= 1 || !omp.ompParallel || !omp.ompThreadNum || !omp.ompNumThreads) return body(0, 1);
    struct Call {
        const std::function<void(int, int)>* body;
        const Lookups* omp;
    } call{&body, &omp};
    omp.ompParallel(
        [](void* data) {
            const auto* c = static_cast<const Call*>(data);
            (*c->body)(c->omp->ompThreadNum(), c->omp->ompNumThreads());
        },
        &call, static_cast<unsigned>(n), 0);
}

ParallelOpenMp::ParallelOpenMp() {
    const auto& omp = lookups();
    if (threadsInForce <= 1 || !omp.ompSet || !omp.ompGet) return;
    previous_ = omp.ompGet();
    if (previous_ != threadsInForce) omp.ompSet(threadsInForce);
}

ParallelOpenMp::~ParallelOpenMp() {
    if (previous_ > 0 && previous_ != threadsInForce) lookups().ompSet(previous_);
}

}  // namespace dragoman
