#include "kernels/thread_roles.h"

#include <sched.h>

namespace dragoman {

YieldToKernelThreads::YieldToKernelThreads() {
#ifdef SCHED_BATCH
    if (pthread_getschedparam(pthread_self(), &policy_, &parameters_) != 0 || policy_ == SCHED_BATCH) return;
    const sched_param none{};
    changed_ = pthread_setschedparam(pthread_self(), SCHED_BATCH, &none) == 0;
#endif
}

YieldToKernelThreads::~YieldToKernelThreads() {
    if (changed_) pthread_setschedparam(pthread_self(), policy_, &parameters_);
}

void runAsKernelThread() {
#ifdef SCHED_BATCH
    int policy = 0;
    sched_param parameters{};
    // Only a yielding policy is undone: a real-time one was asked for by whoever runs the process.
    if (pthread_getschedparam(pthread_self(), &policy, &parameters) != 0 || policy != SCHED_BATCH) return;
    const sched_param none{};
    pthread_setschedparam(pthread_self(), SCHED_OTHER, &none);
#endif
}

int threadPolicy() {
    int policy = 0;
    sched_param parameters{};
    return pthread_getschedparam(pthread_self(), &policy, &parameters) == 0 ? policy : -1;
}

}  // namespace dragoman
