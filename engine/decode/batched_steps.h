#pragma once
// How a StepBatcher runs one step for several sessions of a model (decode/step_batcher.h): the model's
// batched step where it has one, else the states one after another.
#include "decode/step_batcher.h"
#include "models/causal_lm.h"
#include "models/encoder_decoder.h"

namespace dragoman {

StepBatcher::Runner causalSteps(const CausalLanguageModel& model);
StepBatcher::Runner encoderDecoderSteps(const EncoderDecoderModel& model);

}  // namespace dragoman
