#pragma once
// OpenAI's `stop`: the answer ends before the first occurrence of any stop string, which is never shown. While
// streaming, text that could be the start of a stop string is held back until the next delta decides.
#include <string>
#include <string_view>
#include <vector>

namespace dragoman::server {

class StopStrings {
public:
    explicit StopStrings(std::vector<std::string> stops) : stops_(std::move(stops)) {}

    // The text that may be shown now; after a stop string, nothing more (stopped() turns true).
    std::string push(std::string_view delta);
    // What was held back, once generation has ended without a stop.
    std::string finish();
    bool stopped() const { return stopped_; }

private:
    std::vector<std::string> stops_;
    std::string pending_;
    bool stopped_ = false;
};

}  // namespace dragoman::server
