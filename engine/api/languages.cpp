// Languages as the application sees them: what a model folder offers, and what `from: auto` becomes.
#include "dragoman.h"
#include "runtime/architectures.h"

#include <algorithm>

namespace dragoman {

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
    // A bilingual model reads its own source ("mul": any language, as its prompts name none).
    if (!model.fixedFrom.empty() && model.fixedFrom != "mul") {
        guess.from = model.fixedFrom;
        return guess;
    }
    if (guess.detected.empty()) return guess;
    // A multilingual model reads the languages it writes (the window offers those); a prompted model and a "mul"
    // source without language tokens (opus-mt-mul-en) read any (their prompts name no source; the code still picks
    // the sentence rules and HY-MT's Chinese prompt).
    const auto& targets = model.targetLanguages;
    const bool listed = std::find(targets.begin(), targets.end(), guess.detected) != targets.end();
    if (listed || model.prompts || (model.fixedFrom == "mul" && targets.empty())) guess.from = guess.detected;
    return guess;
}

}  // namespace dragoman
