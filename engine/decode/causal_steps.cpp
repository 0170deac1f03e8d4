#include "decode/causal_steps.h"

#include "util/error.h"

namespace dragoman {

StepBatcher::Runner causalSteps(const CausalLanguageModel& model) {
    return [&model](const std::vector<void*>& states, const std::vector<std::vector<TokenId>>& tokens) {
        for (const auto& t : tokens)
            if (t.size() != 1) throw Error("internal", "a decoder-only model's step feeds one token per sequence");
        // Alone, the plain step: it fuses projections a batched step keeps apart (the same numbers either way).
        if (states.size() == 1) return model.forward(*static_cast<CausalState*>(states[0]), tokens[0]);
        std::vector<CausalState*> sequences;
        std::vector<TokenId> ids;
        for (std::size_t i = 0; i < states.size(); ++i) {
            sequences.push_back(static_cast<CausalState*>(states[i]));
            ids.push_back(tokens[i][0]);
        }
        return model.stepMany(sequences, ids);
    };
}

}  // namespace dragoman
