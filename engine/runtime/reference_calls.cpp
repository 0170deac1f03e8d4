#include "runtime/reference_calls.h"

#include "decode/beam_search.h"
#include "decode/causal_session.h"
#include "decode/encoder_decoder_session.h"
#include "decode/logits_tensor.h"
#include "runtime/generate_ids.h"
#include "util/error.h"

namespace dragoman {
std::vector<TokenId> generateOnLibtorch(const RunnableModel& model, const std::vector<TokenId>& ids, std::int64_t maxNew,
                                        std::int64_t beams, bool raw, std::shared_ptr<const LoraSet> adapter) {
    c10::InferenceMode guard;
    if (const auto* c = model.causal()) {
        if (beams == 1) return generateIds(model, ids, maxNew, beams, raw, std::move(adapter));
        const CausalGeneration generation(model, static_cast<std::int64_t>(ids.size()), maxNew, raw);
        CausalBeamSession session(*c, ids, beams, generation.maxNewTokens, std::move(adapter));
        return beamSearch(session, ids, generation.options, {beams, model.generation.lengthPenalty, model.generation.earlyStopping});
    }
    const auto& m = *model.encoderDecoder();
    const std::vector<TokenId> prefix{model.generation.decoderStartId.value_or(m.decoderStartId())};
    const LogitsProcessors processors(model.generation, static_cast<std::int64_t>(prefix.size()) + maxNew);
    SearchOptions options;
    options.maxNewTokens = maxNew;
    options.eosIds = model.generation.eosIds.empty() ? std::vector<TokenId>{m.eosId()} : model.generation.eosIds;
    options.processors = raw ? nullptr : &processors;
    const auto* lora = adapter.get();
    EncoderDecoderSession session(m, m.encode(ids, lora), beams, static_cast<std::int64_t>(prefix.size()) + maxNew, std::move(adapter));
    return beams == 1 ? greedySearch(session, prefix, options)
                      : beamSearch(session, prefix, options, {beams, model.generation.lengthPenalty, model.generation.earlyStopping});
}

TeacherForced teacherForcedLogits(const RunnableModel& model, const std::vector<TokenId>& ids,
                                  const std::optional<std::vector<TokenId>>& decoderIds, std::shared_ptr<const LoraSet> adapter) {
    c10::InferenceMode guard;
    if (const auto* c = model.causal()) {
        if (decoderIds) throw Error("input", "decoder ids are for encoder-decoder models; " + model.id() + " is decoder-only");
        auto state = c->start(static_cast<std::int64_t>(ids.size()));
        state->adapter = adapter;
        return {tensorOf(c->forward(*state, ids, true)), {}};
    }
    const auto& m = *model.encoderDecoder();
    const auto targets = decoderIds.value_or(std::vector<TokenId>{m.decoderStartId()});
    for (auto id : targets)
        if (id < 0 || id >= m.vocabSize()) throw Error("input", "decoder id " + std::to_string(id) + " is outside the vocabulary");
    auto encoded = m.encode(ids, adapter.get());
    EncoderDecoderSession session(m, encoded, 1, static_cast<std::int64_t>(targets.size()), adapter);
    std::vector<torch::Tensor> rows;
    for (auto id : targets)
        rows.push_back(tensorOf(session.next({id}))[0]);
    return {torch::stack(rows), encoded};
}

}  // namespace dragoman
