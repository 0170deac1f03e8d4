#include "server/stop_strings.h"

#include <algorithm>
#include <utility>

namespace dragoman::server {

std::string StopStrings::push(std::string_view delta) {
    if (stopped_) return {};
    pending_ += delta;
    std::size_t cut = std::string::npos;
    for (const auto& stop : stops_)
        if (!stop.empty()) cut = std::min(cut, pending_.find(stop));
    if (cut != std::string::npos) {
        stopped_ = true;
        auto shown = pending_.substr(0, cut);
        pending_.clear();
        return shown;
    }
    // Hold back the longest tail that is a prefix of a stop string.
    std::size_t held = 0;
    for (const auto& stop : stops_)
        for (std::size_t n = std::min(stop.size() - (stop.empty() ? 0 : 1), pending_.size()); n > held; --n)
            if (pending_.compare(pending_.size() - n, n, stop, 0, n) == 0) {
                held = n;
                break;
            }
    auto shown = pending_.substr(0, pending_.size() - held);
    pending_.erase(0, pending_.size() - held);
    return shown;
}

std::string StopStrings::finish() {
    if (stopped_) return {};
    return std::exchange(pending_, {});
}

}  // namespace dragoman::server
