#pragma once
// One translate() call in progress: its request, running statistics, and whether it must stop (the caller's
// cancel token, or the output callback returning false).
#include "runtime/translation_request.h"

#include <chrono>

namespace dragoman {

using Clock = std::chrono::steady_clock;

struct TranslationJob {
    const TranslationRequest& request;
    TranslationStats& stats;
    Clock::time_point start = Clock::now();
    bool stopped = false;

    // Whether to go on; checked between decoding steps, sentences and layers of a long prompt.
    bool keepGoing() {
        if (!stopped && request.cancel.cancelled()) stopped = true;
        return !stopped;
    }
    // Whether anyone reads the output as it comes: without a reader, the text is only decoded at the end.
    bool streams() const { return static_cast<bool>(request.onDelta); }
    void emit(std::string_view delta) {
        if (delta.empty() || !keepGoing()) return;
        if (request.onDelta && !request.onDelta(delta)) stopped = true;
    }
    void tokenArrived() {
        if (stats.firstTokenSeconds < 0) stats.firstTokenSeconds = std::chrono::duration<double>(Clock::now() - start).count();
        ++stats.generatedTokens;
    }
    // What joins two translated sentences: nothing in languages written without spaces.
    std::string sentenceGap() const {
        const auto& to = request.to;
        return to == "zh" || to == "zh-Hant" || to == "ja" || to == "yue" ? "" : " ";
    }
};

}  // namespace dragoman
