#pragma once
// An encoder-decoder model (models/seq2seq.h) over one remembered source, as a DecodingSession: `batch` hypotheses
// and the request's adapter. With a batcher (built on decode/seq2seq_steps.h's seq2seqSteps for the same model), its
// steps are shared with the other requests decoding at the same time.
#include "decode/decoding_session.h"
#include "decode/step_batcher.h"
#include "models/seq2seq.h"

#include <optional>

namespace dragoman {

class Seq2SeqSession : public DecodingSession {
public:
    Seq2SeqSession(const Seq2SeqModel& model, std::shared_ptr<const SourceMemory> source, std::int64_t batch, std::int64_t maxSteps,
                   std::shared_ptr<const LoraSet> adapter = nullptr, StepBatcher* batcher = nullptr)
        : model_(model), state_(model.startDecoding(std::move(source), batch, maxSteps, std::move(adapter))) {
        if (batcher) member_.emplace(*batcher);
    }
    Logits next(const std::vector<TokenId>& tokens) override {
        return member_ ? member_->step(state_.get(), tokens) : model_.stepMany({state_.get()}, {tokens});
    }
    void reorder(const std::vector<std::int64_t>& beams) override { model_.reorder(*state_, beams); }
    void drive(std::vector<TokenId> tokens, const StepContinuation& continuation, bool anyThread) override {
        if (member_ && anyThread) return member_->drive(state_.get(), std::move(tokens), continuation);
        DecodingSession::drive(std::move(tokens), continuation, anyThread);
    }

private:
    const Seq2SeqModel& model_;
    std::unique_ptr<DecoderState> state_;
    std::optional<StepBatcher::Member> member_;  // last: leaves the batch before the state goes
};

}  // namespace dragoman
