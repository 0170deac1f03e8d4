#include "runtime/threads.h"

#include "util/log.h"

#include <torch/torch.h>

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>
#include <thread>

namespace dragoman {

int configureThreads(int threads) {
    static std::once_flag once;
    static int inForce = 0;
    std::call_once(once, [&] {
        int n = threads;
        if (n <= 0)
            if (const char* env = std::getenv("DRAGOMAN_THREADS"); env && *env) n = std::atoi(env);
        if (n <= 0) n = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
        int atenThreads = 1;
        if (const char* env = std::getenv("DRAGOMAN_ATEN_THREADS"); env && *env) atenThreads = std::max(1, std::atoi(env));
        torch::set_num_threads(atenThreads);
        // OpenBLAS keeps its own pool; its setter is looked up at run time so any BLAS works.
        using SetThreads = void (*)(int);
        if (auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) set(n);
        try {
            torch::set_num_interop_threads(1);  // one request at a time: intra-op parallelism is what counts
        } catch (const std::exception&) {
            // Already started by an earlier parallel op; harmless.
        }
        inForce = n;
        log::logger().info("threads: {} for BLAS, {} for ATen", n, atenThreads);
    });
    return inForce;
}

}  // namespace dragoman
