#pragma once
// How a StepBatcher runs one step for several sessions of a model (decode/step_batcher.h): the model's
// batched step where it has one, else the states one after another.
#include "decode/step_batcher.h"
#include "models/causal_lm.h"
#include "models/encoder_decoder.h"

namespace dragoman {

StepBatcher::Runner causalSteps(const CausalLanguageModel& model);
StepBatcher::Runner encoderDecoderSteps(const EncoderDecoderModel& model);

// Sources for the encoder, as StepBatcher::together() takes them: `encoded` is filled, [S_i, d] for sources[i].
struct SourcePrompt {
    std::vector<const std::vector<TokenId>*> sources;
    const LoraSet* adapter;  // may be null
    std::vector<torch::Tensor> encoded;
};
// Encodes the waiting SourcePrompts, those with the same adapter together where the model can
// (BatchedDecoder::encodeMany), else one by one.
StepBatcher::PromptRunner encoderDecoderPrompts(const EncoderDecoderModel& model);

}  // namespace dragoman
