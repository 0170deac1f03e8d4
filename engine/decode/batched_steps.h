#pragma once
// How a StepBatcher runs one step for several sessions of a libtorch encoder-decoder model (decode/step_batcher.h): the
// model's batched step where it has one, else the states one after another. Translation runs every encoder-decoder
// model through decode/seq2seq_steps.h (the libtorch ones through decode/libtorch_seq2seq.h); this is for code that
// drives MarianModel's own interface (its tests, tools/train).
#include "decode/step_batcher.h"
#include "models/encoder_decoder.h"

namespace dragoman {

// The batcher's thread in libtorch's InferenceMode: the sessions' caches of the libtorch models are inference tensors
// (their requests run in InferenceMode), which only code in the same mode may update in place.
StepBatcher::ThreadScope inferenceMode();
StepBatcher::Runner encoderDecoderSteps(const EncoderDecoderModel& model);

}  // namespace dragoman
