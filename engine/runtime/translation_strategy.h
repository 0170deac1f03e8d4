#pragma once
// How a family of models translates one paragraph: a language-token seq2seq model (Marian) takes sentences
// with the target's token in front; a chat model (HY-MT) takes its model card's prompt in its chat format.
// The architecture registry (runtime/architectures.h) names each model_type's strategy.
#include "runtime/translation_job.h"
#include "util/error.h"

#include <string>
#include <utility>
#include <vector>

namespace dragoman {

// The languages a model translates, as its files say (TranslationStrategy::targetLanguages() and fixedPair()).
struct LanguageOffer {
    std::vector<std::string> targets;               // empty: a fixed pair
    std::pair<std::string, std::string> fixedPair;  // a bilingual model's "en"/"de", or empty strings
};

class TranslationStrategy {
public:
    virtual ~TranslationStrategy() = default;

    // Target languages the model can be asked for (empty: a fixed pair, see fixedPair()).
    virtual std::vector<std::string> targetLanguages() const = 0;
    // "en"/"de" of a bilingual model (from tokenizer_config.json), or empty strings.
    virtual std::pair<std::string, std::string> fixedPair() const { return {}; }
    // The languages it reads, where it has several targets and says or implies which sources (a multilingual
    // Marian model); empty: its fixed pair's source, or any language.
    virtual std::vector<std::string> sourceLanguages() const { return {}; }
    // Whether requests may carry a glossary, context, formatted text or sampling (a prompted chat model).
    virtual bool takesPrompts() const { return false; }
    // The prompt templates the model is spoken to with ("hy-mt1.5", "hy-mt2"); empty for unprompted models.
    virtual std::string promptProfile() const { return {}; }
    // Whether requests may carry Hy-MT2's instructions (style, preferences, delimiters, structured data).
    virtual bool takesInstructions() const { return false; }
    // The exact text the model receives for one paragraph of a checked request, in order (chat format and special
    // tokens spelled out): what translateParagraph() would feed the network.
    virtual std::vector<std::string> prompts(const std::string& paragraph, const TranslationRequest& request) const = 0;
    // Whether beam search is available.
    virtual bool supportsBeamSearch() const { return false; }
    // Throws Error("input") or Error("unsupported") for a request this model cannot serve, before any work.
    virtual void check(const TranslationRequest& request) const = 0;
    // One line of input (no line break): its translation, whose pieces also go out through job.emit().
    virtual std::string translateParagraph(const std::string& paragraph, TranslationJob& job) const = 0;
    // Whether the model has a chat format, so complete() answers conversations (TranslationRequest::messages).
    virtual bool chats() const { return false; }
    // How many requests decode together when further ones in flight are worth having (ModelDescription::encodesAhead):
    // the sources of requests waiting for a place in the batch are encoded together meanwhile (StepBatcher). 0: none.
    virtual int encodesAhead() const { return 0; }
    // The answer to job.request.messages, streamed through job.emit() like a translation.
    virtual std::string complete(TranslationJob&) const { throw Error("unsupported", "this model has no chat format"); }
};

}  // namespace dragoman
