#pragma once
// Small text helpers shared by error messages.
#include <string>
#include <vector>

namespace dragoman {

// "a; b; c": several problems found at once, reported in one message.
inline std::string joinProblems(const std::vector<std::string>& problems) {
    std::string text;
    for (const auto& p : problems)
        text += (text.empty() ? "" : "; ") + p;
    return text;
}

}  // namespace dragoman
