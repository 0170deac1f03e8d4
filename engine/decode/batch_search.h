#pragma once
// Greedy decoding of several prompts at once on a decoder-only model. Each prompt is prefilled on its own;
// then every step feeds each unfinished sequence its last token through one CausalLanguageModel::stepMany(),
// which reads the weights once for all of them. A sequence leaves the batch as soon as it stops (a stop id,
// its token limit, or its callback saying so), and each gets exactly the tokens greedySearch() gives it alone.
#include "decode/search.h"
#include "models/causal_lm.h"

#include <functional>
#include <memory>
#include <vector>

namespace dragoman {

struct BatchedSequence {
    std::vector<TokenId> prompt;
    SearchOptions options;                   // maxNewTokens, eosIds, processors, onToken
    std::shared_ptr<const LoraSet> adapter;  // may differ between sequences
    std::function<bool()> interrupted;       // stops this sequence's prefill (Cancelled is not thrown: it just ends)
    std::vector<TokenId> generated;          // filled: up to and including the stop id
};

// Runs every sequence to its end; `maxBatch` (at most kSmallRows, 16) caps how many decode together (the rest wait
// for a place).
void greedyBatch(const CausalLanguageModel& model, std::vector<BatchedSequence>& sequences, std::size_t maxBatch = 16);

}  // namespace dragoman
