#pragma once
// Which threads may take a core from which. A batched run's request threads wake hundreds of times (a line's
// source encoded, its translation done) to do a few microseconds of tokenizing and printing each; woken with the
// normal policy, each preempts whichever kernel thread is on the core, and the step's other thread waits for it at
// the step's end. Marked as yielding, they run when a core comes free (a kernel thread waiting between steps) or at
// the next scheduler tick. Linux's policies, which an unprivileged process may set on its own threads; elsewhere, or
// refused, nothing changes.
#include <pthread.h>

namespace dragoman {

// For as long as it lives, the calling thread (one that prepares work for the kernel threads and waits on them)
// takes a core only when one is free (SCHED_BATCH); its policy before comes back at the end.
class YieldToKernelThreads {
public:
    YieldToKernelThreads();
    ~YieldToKernelThreads();
    YieldToKernelThreads(const YieldToKernelThreads&) = delete;
    YieldToKernelThreads& operator=(const YieldToKernelThreads&) = delete;

private:
    bool changed_ = false;
    int policy_ = 0;
    sched_param parameters_{};
};

// The calling thread (the batcher's, a kernel pool worker) takes the normal policy, whatever the thread that started
// it had: threads inherit their creator's, and a batcher started by a yielding request thread would yield too.
void runAsKernelThread();

// The calling thread's policy, as pthread_getschedparam gives it (for tests).
int threadPolicy();

}  // namespace dragoman
