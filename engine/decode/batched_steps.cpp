#include "decode/batched_steps.h"

#include "models/batched_decoder.h"

#include <torch/torch.h>

#include <map>

namespace dragoman {

StepBatcher::Runner causalSteps(const CausalLanguageModel& model) {
    return [&model](const std::vector<void*>& states, const std::vector<torch::Tensor>& tokens) {
        // Alone, the plain step: it fuses projections a batched step keeps apart (the same numbers either way).
        if (states.size() == 1) return model.forward(*static_cast<CausalState*>(states[0]), tokens[0].reshape({1})).unsqueeze(0);
        std::vector<CausalState*> sequences;
        std::vector<TokenId> ids;
        for (std::size_t i = 0; i < states.size(); ++i) {
            sequences.push_back(static_cast<CausalState*>(states[i]));
            ids.push_back(tokens[i].reshape({1}).item<TokenId>());
        }
        return model.stepMany(sequences, ids);
    };
}

StepBatcher::Runner encoderDecoderSteps(const EncoderDecoderModel& model) {
    const auto* batched = dynamic_cast<const BatchedDecoder*>(&model);
    return [&model, batched](const std::vector<void*>& states, const std::vector<torch::Tensor>& tokens) {
        std::vector<DecoderState*> sequences;
        for (auto* state : states)
            sequences.push_back(static_cast<DecoderState*>(state));
        if (batched && sequences.size() > 1) return batched->stepMany(sequences, tokens);
        std::vector<torch::Tensor> rows;
        for (std::size_t i = 0; i < sequences.size(); ++i)
            rows.push_back(model.step(*sequences[i], tokens[i]));
        return torch::cat(rows);
    };
}

StepBatcher::PromptRunner encoderDecoderPrompts(const EncoderDecoderModel& model) {
    const auto* batched = dynamic_cast<const BatchedDecoder*>(&model);
    return [&model, batched](const std::vector<void*>& prompts) {
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
            std::vector<torch::Tensor> encoded;
            if (batched) {
                encoded = batched->encodeMany(sources, adapter);
            } else {
                for (const auto& source : sources)
                    encoded.push_back(model.encode(source, adapter));
            }
            auto next = std::make_move_iterator(encoded.begin());
            for (auto* prompt : group) {
                prompt->encoded.assign(next, next + static_cast<std::ptrdiff_t>(prompt->sources.size()));
                next += static_cast<std::ptrdiff_t>(prompt->sources.size());
            }
        }
    };
}

}  // namespace dragoman
