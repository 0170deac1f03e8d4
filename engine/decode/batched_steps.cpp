#include "decode/batched_steps.h"

#include "decode/logits_tensor.h"
#include "models/batched_decoder.h"

#include "util/error.h"

#include <torch/torch.h>

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

}  // namespace dragoman
