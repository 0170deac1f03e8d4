#pragma once
// How a StepBatcher runs one step for several sessions of an encoder-decoder model (decode/step_batcher.h): the
// model's batched step where it has one, else the states one after another. Decoder-only models: decode/causal_steps.h.
#include "decode/step_batcher.h"
#include "models/encoder_decoder.h"

namespace dragoman {

// The batcher's thread in libtorch's InferenceMode: the sessions' caches of the libtorch models are inference tensors
// (their requests run in InferenceMode), which only code in the same mode may update in place.
StepBatcher::ThreadScope inferenceMode();
StepBatcher::Runner encoderDecoderSteps(const EncoderDecoderModel& model);

// Sources for the encoder, as StepBatcher::together() takes them: `encoded` ([S_i, d]) and `memories` (what
// decoding reads of it, EncoderDecoderModel::remember) are filled for each of sources[i].
struct SourcePrompt {
    std::vector<const std::vector<TokenId>*> sources;
    const LoraSet* adapter;  // may be null
    std::vector<torch::Tensor> encoded;
    std::vector<std::shared_ptr<const SourceMemory>> memories;
};
// Encodes and remembers the waiting SourcePrompts, those with the same adapter together where the model can
// (BatchedDecoder::encodeMany and rememberMany), else one by one: a request's decoding then starts without
// another turn on the batcher's thread.
StepBatcher::PromptRunner encoderDecoderPrompts(const EncoderDecoderModel& model);

}  // namespace dragoman
