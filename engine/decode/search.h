#pragma once
// Greedy decoding and sampling with Hugging Face generate() semantics (batch of one request); beam search is in
// decode/beam_search.h.
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
    TokenCallback onToken;                         // greedy and sampling
    // Whether onToken only computes (counts, checks a flag) and so may run on a batcher's thread between steps
    // (DecodingSession::drive): false for a callback that may wait, on a slow reader for one.
    bool onTokenAnyThread = false;
};

struct SamplingOptions {
    double temperature = 1.0, topP = 1.0;
    std::int64_t topK = 0;  // 0: no top-k filter
    std::uint64_t seed = 0;
};

// Sampling as generate(do_sample=True): processors, then temperature, top-k and top-p warpers, then one draw
// from the softmax with a generator seeded by `sampling.seed` (same seed, same output; the draws are our own
// generator's, so the tokens are not those of a given torch seed).
std::vector<TokenId> sampleSearch(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options,
                                  const SamplingOptions& sampling);

// Whether `id` is one of `eosIds`.
bool isEndOfSequence(TokenId id, const std::vector<TokenId>& eosIds);

// `prefix`: the sequence so far (decoder start, or the prompt); its last token is fed first.
// Returns the generated tokens only, up to and including EOS.
std::vector<TokenId> greedySearch(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options);

}  // namespace dragoman
