#pragma once
// An encoder-decoder model over one encoded source, as a DecodingSession: `batch` hypotheses and the request's
// adapter. With a batcher (built on decode/batched_steps.h's encoderDecoderSteps for the same model), its steps are
// shared with the other requests decoding at the same time.
#include "decode/decoding_session.h"
#include "decode/logits_tensor.h"
#include "decode/step_batcher.h"
#include "models/encoder_decoder.h"

#include <optional>

namespace dragoman {

class EncoderDecoderSession : public DecodingSession {
public:
    EncoderDecoderSession(const EncoderDecoderModel& model, const torch::Tensor& encoded, std::int64_t batch, std::int64_t maxSteps,
                          std::shared_ptr<const LoraSet> adapter = nullptr, StepBatcher* batcher = nullptr)
        : model_(model) {
        startMember(
            batcher, [&] { state_ = model.startDecoding(encoded, batch, maxSteps, std::move(adapter)); }, member_);
    }
    // Over a source the batcher's prompts already remembered (decode/batched_steps.h's SourcePrompt): nothing left
    // to run on the batcher's thread, the session joins at once.
    EncoderDecoderSession(const EncoderDecoderModel& model, std::shared_ptr<const SourceMemory> source, std::int64_t batch,
                          std::int64_t maxSteps, std::shared_ptr<const LoraSet> adapter = nullptr, StepBatcher* batcher = nullptr)
        : model_(model), state_(model.startDecoding(std::move(source), batch, maxSteps, std::move(adapter))) {
        if (batcher) member_.emplace(*batcher);
    }
    Logits next(const std::vector<TokenId>& tokens) override {
        return member_ ? member_->step(state_.get(), tokens) : logitsOf(model_.step(*state_, torch::tensor(tokens, torch::kInt64)));
    }
    void reorder(const std::vector<std::int64_t>& beams) override { model_.reorder(*state_, torch::tensor(beams, torch::kInt64)); }

private:
    const EncoderDecoderModel& model_;
    std::unique_ptr<DecoderState> state_;
    std::optional<StepBatcher::Member> member_;  // last: leaves the batch before the state goes
};

}  // namespace dragoman
