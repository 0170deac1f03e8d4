#pragma once
// A decoder-only model over one prompt, as a DecodingSession: the whole prompt is run once (prefill) when
// the session starts, and the first next() returns its last position's logits; later calls feed one token.
#include "decode/decoding_session.h"
#include "models/causal_lm.h"
#include "util/error.h"

#include <optional>
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
            batcher, [&] { pending_ = model.forward(*state_, torch::tensor(prompt, torch::kInt64)).unsqueeze(0); }, member_);
    }
    torch::Tensor next(const torch::Tensor& tokens) override {
        if (pending_.defined()) return std::exchange(pending_, torch::Tensor());  // the prompt's last token was fed already
        if (member_) return member_->step(state_.get(), tokens.reshape({1}));
        return model_.forward(*state_, tokens.reshape({1})).unsqueeze(0);
    }
    void reorder(const torch::Tensor&) override { throw Error("unsupported", "beam search is not available for decoder-only models"); }
    const CausalState& state() const { return *state_; }

private:
    const CausalLanguageModel& model_;
    std::unique_ptr<CausalState> state_;
    torch::Tensor pending_;
    std::optional<StepBatcher::Member> member_;  // last: leaves the batch before the state goes
};

}  // namespace dragoman
