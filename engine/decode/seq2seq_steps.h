#pragma once
// How a StepBatcher runs steps and encoder passes for the sessions of an encoder-decoder model (models/seq2seq.h):
// every waiting request's hypotheses in one batched step, every waiting request's sources in one encoder pass.
// Decoder-only models: decode/causal_steps.h.
#include "decode/step_batcher.h"
#include "models/seq2seq.h"

namespace dragoman {

StepBatcher::Runner seq2seqSteps(const Seq2SeqModel& model);

// Sources for the encoder, as StepBatcher::together() takes them: `memories` (what decoding reads of each,
// Seq2SeqModel::encodeSources) is filled for each of sources[i].
struct SourcePrompt {
    std::vector<const std::vector<TokenId>*> sources;
    const LoraSet* adapter;  // may be null
    std::vector<std::shared_ptr<const SourceMemory>> memories;
};
// Encodes the waiting SourcePrompts, those with the same adapter together: a request's decoding then starts without
// another turn on the batcher's thread.
StepBatcher::PromptRunner seq2seqPrompts(const Seq2SeqModel& model);

}  // namespace dragoman
