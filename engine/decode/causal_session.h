#pragma once
// A decoder-only model over one prompt, as a DecodingSession: the whole prompt is run once (prefill) when
// the session starts, and the first next() returns its last position's logits; later calls feed one token.
#include "decode/decoding_session.h"
#include "decode/step_batcher.h"
#include "models/causal_lm.h"
#include "util/error.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace dragoman {

class CausalSession : public DecodingSession {
public:
    // `interrupted` (optional) can stop the prompt's run between layers: the constructor throws Cancelled.
    // `adapter` (optional): the request's LoRA adapter. `batcher` (optional, built on decode/batched_steps.h's
    // causalSteps for the same model): the prompt runs alone, then the steps are shared with other requests.
    CausalSession(const CausalLanguageModel& model, const std::vector<TokenId>& prompt, std::int64_t maxNewTokens,
                  std::function<bool()> interrupted = {}, std::shared_ptr<const LoraSet> adapter = nullptr, StepBatcher* batcher = nullptr)
        : model_(model), state_(model.start(static_cast<std::int64_t>(prompt.size()) + maxNewTokens)) {
        if (prompt.empty()) throw Error("input", "empty prompt");
        state_->interrupted = std::move(interrupted);
        state_->adapter = std::move(adapter);
        startMember(
            batcher, [&] { pending_ = model.forward(*state_, prompt); }, member_);
    }
    Logits next(const std::vector<TokenId>& tokens) override {
        if (!pending_.empty()) return std::exchange(pending_, Logits());  // the prompt's last token was fed already
        if (tokens.size() != 1) throw Error("internal", "a decoder-only session decodes one hypothesis");
        if (member_) return member_->step(state_.get(), tokens);
        return model_.forward(*state_, tokens);
    }
    void reorder(const std::vector<std::int64_t>&) override {
        throw Error("unsupported", "beam search over a decoder-only model takes a CausalBeamSession");
    }
    void drive(std::vector<TokenId> tokens, const StepContinuation& continuation, bool anyThread) override {
        if (!member_ || !anyThread) return DecodingSession::drive(std::move(tokens), continuation, anyThread);
        if (!pending_.empty()) {  // the prompt's logits first, here
            auto logits = std::exchange(pending_, Logits());
            if (!continuation(logits, tokens)) return;
        }
        if (tokens.size() != 1) throw Error("internal", "a decoder-only session decodes one hypothesis");
        member_->drive(state_.get(), std::move(tokens), continuation);
    }
    const CausalState& state() const { return *state_; }

private:
    const CausalLanguageModel& model_;
    std::unique_ptr<CausalState> state_;
    Logits pending_;
    std::optional<StepBatcher::Member> member_;  // last: leaves the batch before the state goes
};

// Beam search over a decoder-only model (generate(num_beams=K)): one cache per hypothesis. The prompt runs once and
// its cache is copied to every beam; a step feeds all hypotheses together (stepMany: each row what it gets alone);
// a reorder moves the caches that one beam continues and copies those that several do.
class CausalBeamSession : public DecodingSession {
public:
    CausalBeamSession(const CausalLanguageModel& model, const std::vector<TokenId>& prompt, std::int64_t beams, std::int64_t maxNewTokens,
                      std::shared_ptr<const LoraSet> adapter = nullptr)
        : model_(model) {
        if (prompt.empty()) throw Error("input", "empty prompt");
        if (beams < 1) throw Error("input", "beam search needs at least one beam");
        const auto capacity = static_cast<std::int64_t>(prompt.size()) + maxNewTokens;
        for (std::int64_t b = 0; b < beams; ++b) {
            states_.push_back(model.start(capacity));
            states_.back()->adapter = adapter;
        }
        const auto last = model.forward(*states_[0], prompt);
        pending_ = Logits::allocate(beams, last.vocab());
        for (std::int64_t b = 0; b < beams; ++b)
            std::copy(last.row(0), last.row(0) + last.vocab(), pending_.row(b));
        for (std::size_t b = 1; b < states_.size(); ++b)
            model.copyState(*states_[0], *states_[b]);
    }
    Logits next(const std::vector<TokenId>& tokens) override {
        if (!pending_.empty()) return std::exchange(pending_, Logits());  // every beam's prompt, run once
        std::vector<CausalState*> states;
        for (auto& state : states_)
            states.push_back(state.get());
        return model_.stepMany(states, tokens);
    }
    void reorder(const std::vector<std::int64_t>& from) override {
        const auto count = states_.size();
        std::vector<std::unique_ptr<CausalState>> next(count);
        std::vector<std::int64_t> firstTaker(count, -1);
        for (std::size_t b = 0; b < count; ++b) {  // the first beam to continue a hypothesis takes its cache
            const auto source = static_cast<std::size_t>(from[b]);
            if (firstTaker[source] >= 0) continue;
            firstTaker[source] = static_cast<std::int64_t>(b);
            next[b] = std::move(states_[source]);
        }
        std::vector<std::unique_ptr<CausalState>> spare;  // the caches of hypotheses no beam continues
        for (auto& state : states_)
            if (state) spare.push_back(std::move(state));
        for (std::size_t b = 0; b < count; ++b) {  // the others get a copy
            if (next[b]) continue;
            next[b] = std::move(spare.back());
            spare.pop_back();
            model_.copyState(*next[static_cast<std::size_t>(firstTaker[static_cast<std::size_t>(from[b])])], *next[b]);
        }
        states_ = std::move(next);
    }

private:
    const CausalLanguageModel& model_;
    std::vector<std::unique_ptr<CausalState>> states_;
    Logits pending_;
};

}  // namespace dragoman
