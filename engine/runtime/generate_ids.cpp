#include "runtime/generate_ids.h"

#include "decode/beam_search.h"
#include "decode/causal_session.h"
#include "decode/seq2seq_session.h"
#include "util/error.h"

namespace dragoman {
namespace {

std::int64_t capped(const CausalLanguageModel& model, std::int64_t promptLength, std::int64_t maxNew) {
    if (promptLength >= model.maxPositions())
        throw Error("input", "the prompt fills the model's " + std::to_string(model.maxPositions()) + " positions");
    return std::min(maxNew, model.maxPositions() - promptLength);
}

}  // namespace

CausalGeneration::CausalGeneration(const RunnableModel& model, std::int64_t promptLength, std::int64_t maxNew, bool raw)
    : maxNewTokens(capped(*model.causal(), promptLength, maxNew)), processors(model.generation, promptLength + maxNewTokens) {
    options.maxNewTokens = maxNewTokens;
    options.eosIds = model.generation.eosIds;
    options.processors = raw || processors.empty() ? nullptr : &processors;
}

std::vector<TokenId> generateIds(const RunnableModel& model, const std::vector<TokenId>& ids, std::int64_t maxNew, std::int64_t beams,
                                 bool raw, std::shared_ptr<const LoraSet> adapter) {
    if (const auto* m = model.seq2seq()) {
        const std::vector<TokenId> prefix{model.generation.decoderStartId.value_or(m->decoderStartId())};
        const LogitsProcessors processors(model.generation, static_cast<std::int64_t>(prefix.size()) + maxNew);
        SearchOptions options;
        options.maxNewTokens = maxNew;
        options.eosIds = model.generation.eosIds.empty() ? std::vector<TokenId>{m->eosId()} : model.generation.eosIds;
        options.processors = raw ? nullptr : &processors;
        auto source = m->encodeSources({ids}, adapter.get()).front();
        Seq2SeqSession session(*m, std::move(source), beams, static_cast<std::int64_t>(prefix.size()) + maxNew, std::move(adapter));
        if (beams == 1) return greedySearch(session, prefix, options);
        return beamSearch(session, prefix, options, {beams, model.generation.lengthPenalty, model.generation.earlyStopping});
    }
    const CausalGeneration generation(model, static_cast<std::int64_t>(ids.size()), maxNew, raw);
    if (beams > 1) {
        CausalBeamSession session(*model.causal(), ids, beams, generation.maxNewTokens, std::move(adapter));
        return beamSearch(session, ids, generation.options, {beams, model.generation.lengthPenalty, model.generation.earlyStopping});
    }
    CausalSession session(*model.causal(), ids, generation.maxNewTokens, {}, std::move(adapter));
    return greedySearch(session, ids, generation.options);
}

}  // namespace dragoman
