// dragoman.h's process-wide functions: threads and memory (logging: api/logging.cpp).
#include "dragoman.h"

#include "kernels/threads.h"

namespace dragoman {

int initEngine(const EngineParams& params) {
    // Also keeps freed memory in the process (configureThreads()).
    return configureThreads(params.threads);
}

}  // namespace dragoman
