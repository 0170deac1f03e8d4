// dragoman.h's process-wide functions: threads and memory (logging: api/logging.cpp).
#include "dragoman.h"

#include "kernels/threads.h"

#include <malloc.h>

namespace dragoman {
namespace {

// Every decoding step allocates and frees the same few hundred KiB to MiB tensors. glibc hands memory above its
// trim threshold back to the kernel on free (and big blocks come from mmap), so the next step faults the same
// pages in again (a seventh of the bundled model's translate time). Up to 64 MiB freed stays in the process.
constexpr int kKeptFreeBytes = 64 << 20;

}  // namespace

int initEngine(const EngineParams& params) {
    mallopt(M_MMAP_THRESHOLD, kKeptFreeBytes);
    mallopt(M_TRIM_THRESHOLD, kKeptFreeBytes);
    return configureThreads(params.threads);
}

}  // namespace dragoman
