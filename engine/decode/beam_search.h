#pragma once
// Beam search with Hugging Face generate() semantics (batch of one request).
#include "decode/search.h"

namespace dragoman {

struct BeamOptions {
    std::int64_t beams = 4;
    double lengthPenalty = 1.0;
    bool earlyStopping = false;
};

// Port of transformers' vectorised GenerationMixin._beam_search for one request: top 2*beams candidates of
// log_softmax + beam score, finished hypotheses scored sum_logprobs / generated_length^length_penalty.
std::vector<TokenId> beamSearch(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options,
                                const BeamOptions& beam);

}  // namespace dragoman
