#include "runtime/reference_calls.h"

#include "decode/causal_session.h"
#include "decode/logits_tensor.h"
#include "decode/seq2seq_session.h"
#include "runtime/generate_ids.h"
#include "util/error.h"

namespace dragoman {
TeacherForced teacherForcedLogits(const RunnableModel& model, const std::vector<TokenId>& ids,
                                  const std::optional<std::vector<TokenId>>& decoderIds, std::shared_ptr<const LoraSet> adapter) {
    c10::InferenceMode guard;
    if (const auto* c = model.causal()) {
        if (decoderIds) throw Error("input", "decoder ids are for encoder-decoder models; " + model.id() + " is decoder-only");
        auto state = c->start(static_cast<std::int64_t>(ids.size()));
        state->adapter = adapter;
        return {tensorOf(c->forward(*state, ids, true)), {}};
    }
    const auto& m = *model.seq2seq();
    const auto targets = decoderIds.value_or(std::vector<TokenId>{m.decoderStartId()});
    for (auto id : targets)
        if (id < 0 || id >= m.vocabSize()) throw Error("input", "decoder id " + std::to_string(id) + " is outside the vocabulary");
    auto encoded = m.encoderOutput(ids, adapter.get());
    const auto rows = static_cast<std::int64_t>(encoded.size()) / m.hiddenSize();
    auto encoder = torch::from_blob(encoded.data(), {rows, m.hiddenSize()}, torch::kFloat32).clone();
    Seq2SeqSession session(m, m.encodeSources({ids}, adapter.get()).front(), 1, static_cast<std::int64_t>(targets.size()), adapter);
    std::vector<torch::Tensor> logits;
    for (auto id : targets)
        logits.push_back(tensorOf(session.next({id}))[0]);
    return {torch::stack(logits), encoder};
}

}  // namespace dragoman
