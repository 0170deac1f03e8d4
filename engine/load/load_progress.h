#pragma once
// Load phases and the progress callback: a fraction per phase, and a way to stop.
#include <functional>
#include <string_view>

namespace dragoman {

enum class LoadPhase { Resolve, Verify, Map, Build, PageIn };

std::string_view phaseName(LoadPhase phase);

// Called often (every few MiB during byte-bound phases) from the loading thread. Return false to cancel:
// the load stops within about 100 ms, releases everything and throws Cancelled.
using LoadProgress = std::function<bool(LoadPhase phase, double fraction)>;

}  // namespace dragoman
