#pragma once
// Text in, translation out, for any loaded model: paragraphs stay paragraphs (one output line per input
// line, empty lines stay empty), long paragraphs are split into sentences, and the text streams out as
// final deltas while it is generated. Greedy decoding by default, hence deterministic.
#include "runtime/hymt_prompt.h"
#include "runtime/runnable_model.h"

#include <functional>
#include <optional>
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
    // Prompted models (HY-MT) only: sampling with the model's recommended settings, terminology,
    // preceding context, and text carrying <sn></sn> format tags.
    bool sample = false;
    std::uint64_t seed = 0;
    std::vector<std::pair<std::string, std::string>> glossary{};
    std::string context{};
    bool formatted = false;
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
    // Decoder-only models: one prompt per group of sentences (runtime/prompted_translation.cpp).
    std::string translateWithPrompt(const std::string& segment, Job& job) const;
    std::string translateParagraphWithPrompt(const std::string& paragraph, const std::string& sentenceGap, Job& job) const;

    std::shared_ptr<const RunnableModel> model_;
    std::vector<std::string> modelLanguageTokens_;
    std::vector<std::string> targets_;
    std::pair<std::string, std::string> pair_;
    std::optional<ChatFormat> chat_;  // decoder-only models
    std::vector<TokenId> stopIds_;
};

}  // namespace dragoman
