#pragma once
// The phases of opening a model, in order, with their names for people and their expected costs (seconds),
// for the one progress contract of util/progress.h.
#include "util/progress.h"

#include <string_view>
#include <vector>

namespace dragoman {

enum class LoadPhase : std::size_t { Resolve, Verify, Map, PageIn, Network, Tokenizer };

std::string_view phaseName(LoadPhase phase);

// Every phase with a rough default cost; the loader refines them (bytes to hash or read) as it learns more.
std::vector<ProgressMeter::Phase> loadPhases();

inline std::size_t index(LoadPhase phase) {
    return static_cast<std::size_t>(phase);
}

}  // namespace dragoman
