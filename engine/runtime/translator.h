#pragma once
// Text in, translation out, for any loaded model: paragraphs stay paragraphs (one output line per input
// line, empty lines stay empty), long paragraphs are split into sentences, and the text streams out as
// final deltas while it is generated. Greedy decoding by default, hence deterministic.
#include "runtime/runnable_model.h"

#include <functional>
#include <string>
#include <string_view>

namespace dragoman {

struct TranslationRequest {
    std::string text;
    std::string from, to;  // Dragoman language codes
    std::int64_t beams = 1;
    std::uint64_t requestId = 0;
    // Receives each final piece of the output; return false to stop (the output so far is returned).
    std::function<bool(std::string_view delta)> onDelta;
};

struct TranslationStats {
    std::int64_t sourceTokens = 0, generatedTokens = 0;
    double firstTokenSeconds = -1, totalSeconds = 0;
    bool stopped = false;
};

class Translator {
public:
    explicit Translator(std::shared_ptr<const RunnableModel> model);

    // Throws Error("input") for invalid UTF-8 or a language the model cannot produce.
    std::string translate(const TranslationRequest& request, TranslationStats* stats = nullptr) const;
    // Target languages the model can be asked for (empty: a fixed pair, see fixedPair()).
    std::vector<std::string> targetLanguages() const { return targets_; }
    // "en"/"de" of a bilingual model (from tokenizer_config.json), or empty strings.
    std::pair<std::string, std::string> fixedPair() const { return pair_; }

private:
    struct Job;
    std::string translateSentence(const std::string& sentence, const std::string& languageToken, Job& job) const;

    std::shared_ptr<const RunnableModel> model_;
    std::vector<std::string> modelLanguageTokens_;
    std::vector<std::string> targets_;
    std::pair<std::string, std::string> pair_;
};

}  // namespace dragoman
