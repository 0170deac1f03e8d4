#pragma once
// One translate() call in progress: its request, running statistics, and whether it must stop (the caller's
// cancel token, or the output callback returning false).
#include "runtime/translation_request.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>

namespace dragoman {

using Clock = std::chrono::steady_clock;

struct TranslationJob {
    const TranslationRequest& request;
    TranslationStats& stats;
    Clock::time_point start = Clock::now();
    bool stopped = false;

    // Whether to go on; checked between decoding steps, sentences and layers of a long prompt. False once the
    // request is cancelled or its reader gone (stopped), or once it has the tokens it asked for at most.
    bool keepGoing() { return !cancelled() && tokensLeft() != 0; }
    // What the request's cap (maxNewTokens, over all its sentences) still allows; none: no cap.
    std::optional<std::int64_t> tokensLeft() const {
        if (!request.maxNewTokens) return std::nullopt;
        return std::max<std::int64_t>(0, *request.maxNewTokens - stats.generatedTokens);
    }
    // Whether anyone reads the output as it comes: without a reader, the text is only decoded at the end.
    bool streams() const { return static_cast<bool>(request.onDelta); }
    // The text of the tokens generated so far goes out even when the last one reached the cap.
    void emit(std::string_view delta) {
        if (delta.empty() || cancelled()) return;
        if (request.onDelta && !request.onDelta(delta)) stopped = true;
    }
    void tokenArrived() {
        if (stats.firstTokenSeconds < 0) stats.firstTokenSeconds = std::chrono::duration<double>(Clock::now() - start).count();
        ++stats.generatedTokens;
    }
    bool cancelled() {
        if (!stopped && request.cancel.cancelled()) stopped = true;
        return stopped;
    }
    // What joins two translated sentences: nothing in languages written without spaces.
    std::string sentenceGap() const {
        const auto& to = request.to;
        return to == "zh" || to == "zh-Hant" || to == "ja" || to == "yue" ? "" : " ";
    }
};

}  // namespace dragoman
