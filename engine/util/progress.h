#pragma once
// One progress and cancel contract for every long operation. A caller passes one callback; the operation
// declares its phases with their expected costs and reports (phase, done, total) in each, and the meter turns
// that into one overall fraction from 0 to 1 that never goes back, so a progress bar fills once.
#include "util/cancel.h"

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace dragoman {

struct ProgressReport {
    std::string_view phase;             // for people: "Checking files", "Reading weights", ...
    std::uint64_t done = 0, total = 0;  // within the phase (bytes, tensors, steps)
    double overall = 0;                 // 0..1 over the whole operation, weighted by each phase's expected time; never goes back
};
// Called from the working thread, often (every few MiB). Return false to stop, like CancelToken::cancel().
using ProgressCallback = std::function<bool(const ProgressReport&)>;

class ProgressMeter {
public:
    struct Phase {
        std::string name;
        double weight = 1;  // expected cost, relative to the other phases (seconds are a good unit)
    };
    ProgressMeter(ProgressCallback callback = {}, CancelToken cancel = {}, std::vector<Phase> phases = {});

    // Changes a phase's expected cost once more is known (bytes to hash on first sight), before it starts.
    void setWeight(std::size_t phase, double weight);
    // Progress inside `phase`; throws Cancelled (naming the phase) when the callback or the token says stop.
    void report(std::size_t phase, std::uint64_t done, std::uint64_t total);
    // The same, answering false instead of throwing (for code that unwinds by itself).
    bool keepGoing(std::size_t phase, std::uint64_t done, std::uint64_t total);
    // The phase is skipped: its share of the bar is passed at once.
    void skip(std::size_t phase) { report(phase, 1, 1); }
    const std::string& phaseName(std::size_t phase) const { return phases_.at(phase).name; }
    bool cancelled() const { return cancel_.cancelled(); }

private:
    ProgressCallback callback_;
    CancelToken cancel_;
    std::vector<Phase> phases_;
    double reported_ = 0;
};

}  // namespace dragoman
