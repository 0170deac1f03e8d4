// Languages as the application sees them: what a model folder offers, and what `from: auto` becomes.
#include "text/languages.h"
#include "dragoman.h"
#include "runtime/architectures.h"

#include <algorithm>

namespace dragoman {
namespace {

// "German", or the code for a language outside the table.
std::string nameOf(const std::string& code) {
    const auto language = findLanguage(code);
    return language ? language->english : code;
}

// One language, as opposed to a group a Marian model reads ("mul", "gem", "ROMANCE", "zle"): a code of the table
// or an ISO 639-1 two-letter code.
bool isOneLanguage(const std::string& code) {
    return findLanguage(code) || (code.size() == 2 && std::all_of(code.begin(), code.end(), [](char c) { return c >= 'a' && c <= 'z'; }));
}

}  // namespace

ModelLanguages modelLanguages(const ModelListing& model) {
    const auto& architecture = architectureFor(model.modelType, (model.dir / "config.json").string());
    auto offer = architecture.languages(model.dir);
    return {std::move(offer.targets), std::move(offer.fixedPair.first), std::move(offer.fixedPair.second)};
}

SourceGuess sourceLanguageFor(std::string_view text, const ModelDescription& model) {
    SourceGuess guess;
    if (const auto detected = detectLanguage(text)) {
        guess.detected = detected->code;
        guess.reliable = detected->reliable;
    }
    auto refuse = [&](const std::string& reads) {
        guess.unreadable = true;
        guess.reason = "the text looks like " + nameOf(guess.detected) + ", and " + model.id + " reads " + reads + " only";
    };
    // A bilingual model reads its own source; a group ("mul", "gem") any language of it, which the detector cannot
    // judge. Traditional Chinese is Chinese to a zh model.
    if (!model.fixedFrom.empty() && model.fixedFrom != "mul") {
        guess.from = model.fixedFrom;
        if (guess.reliable && isOneLanguage(model.fixedFrom) && primaryLanguage(guess.detected) != primaryLanguage(model.fixedFrom))
            refuse(nameOf(model.fixedFrom));
        return guess;
    }
    if (guess.detected.empty()) return guess;
    // A prompted model, a server whose sources are not known and a "mul" source without language tokens
    // (opus-mt-mul-en) read any language (their prompts name no source; the code still picks the sentence rules and
    // HY-MT's Chinese prompt).
    const auto& targets = model.targetLanguages;
    if (model.prompts || model.anySource || targets.empty()) {
        guess.from = guess.detected;
        return guess;
    }
    // A multilingual model reads the languages it writes (the window offers those), a variety as its language.
    auto listed = std::find(targets.begin(), targets.end(), guess.detected);
    if (listed == targets.end())
        listed = std::find_if(targets.begin(), targets.end(),
                              [&](const std::string& t) { return primaryLanguage(t) == primaryLanguage(guess.detected); });
    if (listed != targets.end()) {
        guess.from = *listed;
        return guess;
    }
    if (guess.reliable) {
        std::string reads;
        for (std::size_t i = 0; i < targets.size(); ++i)
            reads += (i == 0 ? "" : i + 1 == targets.size() ? " and " : ", ") + nameOf(targets[i]);
        refuse(reads);
    }
    return guess;
}

}  // namespace dragoman
