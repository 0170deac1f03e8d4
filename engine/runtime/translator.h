#pragma once
// Text in, translation out, for any loaded model: paragraphs stay paragraphs (one output line per input
// line, empty lines stay empty), each translated by the model's strategy (runtime/translation_strategy.h),
// and the text streams out as final deltas while it is generated. Greedy decoding by default, hence
// deterministic.
#include "runtime/runnable_model.h"
#include "runtime/translation_request.h"

#include <memory>
#include <string>

namespace dragoman {

class Translator {
public:
    // Throws Error("tokenizer") for a model that cannot translate text (no tokenizer files).
    explicit Translator(std::shared_ptr<const RunnableModel> model);

    // Throws Error("input") for invalid UTF-8 or a language the model cannot produce.
    std::string translate(const TranslationRequest& request, TranslationStats* stats = nullptr) const;
    // Target languages the model can be asked for (empty: a fixed pair, see fixedPair()).
    std::vector<std::string> targetLanguages() const { return strategy_.targetLanguages(); }
    // "en"/"de" of a bilingual model (from tokenizer_config.json), or empty strings.
    std::pair<std::string, std::string> fixedPair() const { return strategy_.fixedPair(); }
    const TranslationStrategy& strategy() const { return strategy_; }

private:
    std::shared_ptr<const RunnableModel> model_;
    const TranslationStrategy& strategy_;
};

}  // namespace dragoman
