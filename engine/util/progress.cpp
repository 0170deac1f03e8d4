#include "util/progress.h"

#include "util/error.h"

#include <algorithm>

namespace dragoman {

ProgressMeter::ProgressMeter(ProgressCallback callback, CancelToken cancel, std::vector<Phase> phases)
    : callback_(std::move(callback)), cancel_(std::move(cancel)), phases_(std::move(phases)) {}

void ProgressMeter::setWeight(std::size_t phase, double weight) {
    phases_.at(phase).weight = std::max(0.0, weight);
}

bool ProgressMeter::keepGoing(std::size_t phase, std::uint64_t done, std::uint64_t total) {
    if (cancel_.cancelled()) return false;
    if (!callback_ || phase >= phases_.size()) return true;
    double before = 0, all = 0;
    for (std::size_t i = 0; i < phases_.size(); ++i) {
        all += phases_[i].weight;
        if (i < phase) before += phases_[i].weight;
    }
    const double within = total == 0 ? 1.0 : std::min(1.0, static_cast<double>(done) / static_cast<double>(total));
    const double overall = all > 0 ? (before + within * phases_[phase].weight) / all : 1.0;
    // A weight changed after the bar moved could make it step back: it waits instead.
    reported_ = std::max(reported_, std::min(1.0, overall));
    if (callback_({phases_[phase].name, done, total, reported_})) return true;
    cancel_.cancel();
    return false;
}

void ProgressMeter::report(std::size_t phase, std::uint64_t done, std::uint64_t total) {
    if (!keepGoing(phase, done, total))
        throw Cancelled("stopped while " + (phase < phases_.size() ? phases_[phase].name : std::string("working")));
}

}  // namespace dragoman
