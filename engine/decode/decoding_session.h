#pragma once
// One request's view of a model while generating: feed a token per hypothesis, get next-token logits.
#include "decode/logits.h"
#include "text/tokenizer.h"

#include <functional>
#include <vector>

namespace dragoman {

// What a driven search does after each step (DecodingSession::drive): reads the step's logits (it may change them,
// as processors do), writes the tokens to feed next into `next`, and says whether to go on.
using StepContinuation = std::function<bool(Logits& logits, std::vector<TokenId>& next)>;

class DecodingSession {
public:
    virtual ~DecodingSession() = default;
    // One token per hypothesis -> logits [hypotheses, V]
    virtual Logits next(const std::vector<TokenId>& tokens) = 0;
    // Keep hypotheses `beams` (indices), in that order.
    virtual void reorder(const std::vector<std::int64_t>& beams) = 0;
    // Feeds `tokens`, then steps for as long as `continuation` asks. With `anyThread`, the continuation may run on
    // another thread while the caller waits (a session sharing a batcher runs it on the batcher's thread right
    // after each batched step, so the request costs no hand-off between steps): it must then only compute, never
    // wait for anything (a slow reader, a lock held elsewhere). Without it, or without a batcher, the steps run
    // from here.
    virtual void drive(std::vector<TokenId> tokens, const StepContinuation& continuation, bool anyThread) {
        (void)anyThread;
        for (;;) {
            auto logits = next(tokens);
            if (!continuation(logits, tokens)) return;
        }
    }
};

}  // namespace dragoman
