#pragma once
// Greedy decoding and beam search with Hugging Face generate() semantics (batch of one request).
#include "decode/decoding_session.h"
#include "decode/logits_processors.h"

#include <functional>
#include <vector>

namespace dragoman {

// Called with each new token of greedy decoding; return false to stop (the token is kept).
using TokenCallback = std::function<bool(TokenId)>;

struct SearchOptions {
    std::int64_t maxNewTokens = 256;
    std::vector<TokenId> eosIds;
    const LogitsProcessors* processors = nullptr;  // null: raw scores
    TokenCallback onToken;                         // greedy only
};

struct BeamOptions {
    std::int64_t beams = 4;
    double lengthPenalty = 1.0;
    bool earlyStopping = false;
};

// `prefix`: the sequence so far (decoder start, or the prompt); its last token is fed first.
// Returns the generated tokens only, up to and including EOS.
std::vector<TokenId> greedySearch(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options);

// Port of transformers' vectorised GenerationMixin._beam_search for one request: top 2*beams candidates of
// log_softmax + beam score, finished hypotheses scored sum_logprobs / generated_length^length_penalty.
std::vector<TokenId> beamSearch(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options,
                                const BeamOptions& beam);

}  // namespace dragoman
