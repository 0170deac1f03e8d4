#pragma once
// Ids generated the way Hugging Face's generate() makes them (greedy or beam search, generation_config.json's
// processors unless raw, up to and including EOS): what dragoman-cli's generate prints and the parity checks
// compare. No libtorch here (a libtorch model's own code sets what it needs).
#include "decode/logits_processors.h"
#include "decode/search.h"
#include "runtime/runnable_model.h"

#include <memory>
#include <vector>

namespace dragoman {

// ids: a causal model's prompt, or an encoder-decoder model's source. Returns only the new ids (not the
// prompt, not the decoder start token).
// `adapter` (may be null): a LoRA adapter of this model (RunnableModel::loadAdapter).
std::vector<TokenId> generateIds(const RunnableModel& model, const std::vector<TokenId>& ids, std::int64_t maxNewTokens, std::int64_t beams,
                                 bool raw, std::shared_ptr<const LoraSet> adapter = nullptr);

// A decoder-only model's generate() settings for one prompt: new tokens capped by the positions left,
// generation_config.json's processors (none when raw), its EOS ids. Throws Error("input") for a prompt that fills
// the model's positions.
struct CausalGeneration {
    CausalGeneration(const RunnableModel& model, std::int64_t promptLength, std::int64_t maxNewTokens, bool raw);
    CausalGeneration(const CausalGeneration&) = delete;
    CausalGeneration& operator=(const CausalGeneration&) = delete;

    std::int64_t maxNewTokens;
    LogitsProcessors processors;
    SearchOptions options;  // reads `processors`
};

}  // namespace dragoman
