#pragma once
// Wall-clock intervals for load statistics and benchmarks, on the monotonic clock.
#include <chrono>

namespace dragoman {

using SteadyClock = std::chrono::steady_clock;

inline double secondsSince(SteadyClock::time_point start) {
    return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

}  // namespace dragoman
