#pragma once
// One request's view of a model while generating: feed a token per hypothesis, get next-token logits.
#include "decode/logits.h"
#include "text/tokenizer.h"

#include <vector>

namespace dragoman {

class DecodingSession {
public:
    virtual ~DecodingSession() = default;
    // One token per hypothesis -> logits [hypotheses, V]
    virtual Logits next(const std::vector<TokenId>& tokens) = 0;
    // Keep hypotheses `beams` (indices), in that order.
    virtual void reorder(const std::vector<std::int64_t>& beams) = 0;
};

}  // namespace dragoman
