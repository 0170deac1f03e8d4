#pragma once
// The two calls that parity checks make on any model, as Hugging Face does them: ids generated the way
// generate() does (runtime/generate_ids.h), and teacher-forced logits (here: they are returned as tensors). Shared by
// dragoman-cli (generate, logits) and the tests.
#include "runtime/generate_ids.h"
#include "runtime/runnable_model.h"

#include <torch/torch.h>

#include <optional>
#include <vector>

namespace dragoman {

struct TeacherForced {
    torch::Tensor logits;   // [T, vocab] float32
    torch::Tensor encoder;  // [S, d] for an encoder-decoder model, undefined otherwise
};
// A causal model: the logits at every position of ids. An encoder-decoder model: the decoder logits at
// every position of decoderIds (default: the decoder start token) with ids as the source. Throws
// Error("input") for decoder ids outside the vocabulary or given to a causal model.
TeacherForced teacherForcedLogits(const RunnableModel& model, const std::vector<TokenId>& ids,
                                  const std::optional<std::vector<TokenId>>& decoderIds, std::shared_ptr<const LoraSet> adapter = nullptr);

}  // namespace dragoman
