#pragma once
// How a StepBatcher runs one step for several sessions of a decoder-only model (decode/step_batcher.h): the model's
// stepMany, or its plain step for one session alone.
#include "decode/step_batcher.h"
#include "models/causal_lm.h"

namespace dragoman {

StepBatcher::Runner causalSteps(const CausalLanguageModel& model);

}  // namespace dragoman
