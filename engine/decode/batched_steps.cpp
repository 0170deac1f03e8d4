#include "decode/batched_steps.h"

#include "decode/logits_tensor.h"
#include "models/batched_decoder.h"

#include "util/error.h"

#include <torch/torch.h>

#include <map>

namespace dragoman {

StepBatcher::ThreadScope inferenceMode() {
    return [](const std::function<void()>& serve) {
        c10::InferenceMode guard;
        serve();
    };
}

StepBatcher::Runner encoderDecoderSteps(const EncoderDecoderModel& model) {
    const auto* batched = dynamic_cast<const BatchedDecoder*>(&model);
    return [&model, batched](const std::vector<void*>& states, const std::vector<std::vector<TokenId>>& tokens) {
        std::vector<DecoderState*> sequences;
        std::vector<torch::Tensor> ids;
        for (std::size_t i = 0; i < states.size(); ++i) {
            sequences.push_back(static_cast<DecoderState*>(states[i]));
            ids.push_back(torch::tensor(tokens[i], torch::kInt64));
        }
        if (batched && sequences.size() > 1) return logitsOf(batched->stepMany(sequences, ids));
        std::vector<torch::Tensor> rows;
        for (std::size_t i = 0; i < sequences.size(); ++i)
            rows.push_back(model.step(*sequences[i], ids[i]));
        return logitsOf(torch::cat(rows));
    };
}

namespace {

constexpr std::size_t kMostRowsTogether = 2048;

}  // namespace

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
            std::vector<std::shared_ptr<const SourceMemory>> memories;
            if (batched) {
                // Passes of at most kMostRowsTogether source tokens (a pass's activations grow with its rows), and
                // every source in one; a source gets the same numbers in any pass.
                for (std::size_t first = 0; first < sources.size();) {
                    std::size_t end = first + 1, rows = sources[first].size();
                    while (end < sources.size() && rows + sources[end].size() <= kMostRowsTogether)
                        rows += sources[end++].size();
                    const auto part = batched->encodeMany(
                        {sources.begin() + static_cast<std::ptrdiff_t>(first), sources.begin() + static_cast<std::ptrdiff_t>(end)},
                        adapter);
                    const auto remembered = batched->rememberMany(part, adapter);
                    encoded.insert(encoded.end(), part.begin(), part.end());
                    memories.insert(memories.end(), remembered.begin(), remembered.end());
                    first = end;
                }
            } else {
                for (const auto& source : sources) {
                    encoded.push_back(model.encode(source, adapter));
                    memories.push_back(model.remember(encoded.back(), adapter));
                }
            }
            std::size_t next = 0;
            for (auto* prompt : group) {
                const auto count = static_cast<std::ptrdiff_t>(prompt->sources.size());
                prompt->encoded.assign(encoded.begin() + static_cast<std::ptrdiff_t>(next),
                                       encoded.begin() + static_cast<std::ptrdiff_t>(next) + count);
                prompt->memories.assign(memories.begin() + static_cast<std::ptrdiff_t>(next),
                                        memories.begin() + static_cast<std::ptrdiff_t>(next) + count);
                next += prompt->sources.size();
            }
        }
    };
}

}  // namespace dragoman
