#include "decode/seq2seq_steps.h"

#include <map>

namespace dragoman {

StepBatcher::Runner seq2seqSteps(const Seq2SeqModel& model) {
    return [&model](const std::vector<void*>& states, const std::vector<std::vector<TokenId>>& tokens) {
        std::vector<DecoderState*> sequences;
        sequences.reserve(states.size());
        for (auto* state : states)
            sequences.push_back(static_cast<DecoderState*>(state));
        return model.stepMany(sequences, tokens);
    };
}

StepBatcher::PromptRunner seq2seqPrompts(const Seq2SeqModel& model) {
    return [&model](const std::vector<void*>& prompts) {
        std::map<const LoraSet*, std::vector<SourcePrompt*>> byAdapter;
        for (auto* p : prompts) {
            auto* prompt = static_cast<SourcePrompt*>(p);
            byAdapter[prompt->adapter].push_back(prompt);
        }
        for (auto& [adapter, group] : byAdapter) {
            std::vector<std::vector<TokenId>> sources;
            for (const auto* prompt : group)
                for (const auto* source : prompt->sources)
                    sources.push_back(*source);
            const auto memories = model.encodeSources(sources, adapter);
            std::size_t next = 0;
            for (auto* prompt : group) {
                const auto count = static_cast<std::ptrdiff_t>(prompt->sources.size());
                const auto first = memories.begin() + static_cast<std::ptrdiff_t>(next);
                prompt->memories.assign(first, first + count);
                next += prompt->sources.size();
            }
        }
    };
}

}  // namespace dragoman
