#pragma once
// One translate() call in progress: its request, running statistics and whether the caller stopped it.
#include "runtime/translator.h"

#include <chrono>

namespace dragoman {

using Clock = std::chrono::steady_clock;

struct Translator::Job {
    const TranslationRequest& request;
    TranslationStats& stats;
    Clock::time_point start = Clock::now();
    bool stopped = false;

    void emit(std::string_view delta) {
        if (delta.empty() || stopped) return;
        if (request.onDelta && !request.onDelta(delta)) stopped = true;
    }
    void tokenArrived() {
        if (stats.firstTokenSeconds < 0) stats.firstTokenSeconds = std::chrono::duration<double>(Clock::now() - start).count();
        ++stats.generatedTokens;
    }
};

}  // namespace dragoman
