#include "decode/beam_search.h"

#include "decode/logits_tensor.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>

namespace dragoman {
namespace {

bool isEos(TokenId id, const std::vector<TokenId>& eos) {
    return std::find(eos.begin(), eos.end(), id) != eos.end();
}

constexpr float kFinishedOff = -1.0e9f;  // transformers' "not a candidate" score

// A small result tensor's values, read once: per-element item() calls cost an ATen dispatch each.
template <typename T>
std::vector<T> hostValues(const torch::Tensor& t) {
    const auto c = t.to(c10::CppTypeToScalarType<T>::value).contiguous();
    return std::vector<T>(c.template data_ptr<T>(), c.template data_ptr<T>() + c.numel());
}

}  // namespace

std::vector<TokenId> beamSearch(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options,
                                const BeamOptions& beam) {
    const std::int64_t B = beam.beams;
    const std::int64_t K =
        std::max<std::int64_t>(2, 1 + static_cast<std::int64_t>(options.eosIds.size())) * B;  // max(2, 1 + n_eos) * beams
    const std::int64_t promptLength = static_cast<std::int64_t>(prefix.size());
    const std::int64_t maxLength = promptLength + options.maxNewTokens;

    std::vector<std::vector<TokenId>> running(B, prefix), finished(B, prefix);
    auto runningScores = torch::full({B}, kFinishedOff, torch::kFloat32);
    runningScores[0] = 0.0f;
    auto finishedScores = torch::full({B}, kFinishedOff, torch::kFloat32);
    std::vector<bool> isFinished(B, false);
    bool heuristicUnsatisfied = true;
    std::int64_t curLength = promptLength;
    // Every running hypothesis fed its last token; the first step feeds the prefix's last token B times.
    std::vector<TokenId> inputs(static_cast<std::size_t>(B), prefix.back());

    for (;;) {
        auto logProbs = logitsOf(torch::log_softmax(tensorOf(session.next(inputs)), -1));
        if (options.processors) options.processors->apply(logProbs, running);
        const auto vocab = logProbs.vocab();
        auto accumulated = (tensorOf(logProbs) + runningScores.unsqueeze(1)).reshape({B * vocab});
        auto [topValues, topIndices] = torch::topk(accumulated, K);
        const auto sourceBeams = hostValues<std::int64_t>(topIndices.div(vocab, "floor"));
        const auto tokens = hostValues<std::int64_t>(topIndices.remainder(vocab));

        std::vector<std::vector<TokenId>> candidates(K);
        std::vector<bool> hits(K);
        const bool atMax = curLength + 1 >= maxLength;
        for (std::int64_t k = 0; k < K; ++k) {
            candidates[k] = running[sourceBeams[k]];
            candidates[k].push_back(tokens[k]);
            hits[k] = isEos(tokens[k], options.eosIds) || atMax;
        }
        // Running beams for the next step: the best B candidates that did not just finish.
        auto hitMask = torch::tensor(std::vector<float>(hits.begin(), hits.end()), torch::kFloat32);
        auto runningCandidates = topValues + hitMask * kFinishedOff;
        const auto nextBeamsTensor = std::get<1>(torch::topk(runningCandidates, B));
        const auto nextBeams = hostValues<std::int64_t>(nextBeamsTensor);
        std::vector<std::vector<TokenId>> nextRunning(B);
        for (std::int64_t b = 0; b < B; ++b)
            nextRunning[b] = candidates[nextBeams[b]];
        runningScores = runningCandidates.index_select(0, nextBeamsTensor);

        // Finished hypotheses: candidates that ended here and rank among the top B, merged with those kept.
        const double generatedLength = static_cast<double>(curLength + 1 - promptLength);
        auto candidateScores = topValues / static_cast<float>(std::pow(generatedLength, beam.lengthPenalty));
        const bool allFinished = std::all_of(isFinished.begin(), isFinished.end(), [](bool f) { return f; });
        std::vector<float> offsets(K);
        for (std::int64_t k = 0; k < K; ++k) {
            const bool justFinished = hits[k] && k < B;
            offsets[k] = ((allFinished && beam.earlyStopping) ? kFinishedOff : 0.0f) + (heuristicUnsatisfied ? 0.0f : kFinishedOff) +
                         (justFinished ? 0.0f : kFinishedOff);
        }
        candidateScores = candidateScores + torch::tensor(offsets, torch::kFloat32);
        auto mergedScores = torch::cat({finishedScores, candidateScores});
        const auto keepTensor = std::get<1>(torch::topk(mergedScores, B));
        const auto keep = hostValues<std::int64_t>(keepTensor);
        std::vector<std::vector<TokenId>> nextFinished(B);
        std::vector<bool> nextIsFinished(B);
        for (std::int64_t b = 0; b < B; ++b) {
            const auto index = keep[b];
            if (index < B) {
                nextFinished[b] = finished[index];
                nextIsFinished[b] = isFinished[index];
            } else {
                nextFinished[b] = candidates[index - B];
                nextIsFinished[b] = hits[index - B] && (index - B) < B;
            }
        }
        finishedScores = mergedScores.index_select(0, keepTensor);
        finished = std::move(nextFinished);
        isFinished = std::move(nextIsFinished);
        curLength += 1;

        // Early-stop heuristic and loop condition, as transformers.
        const double bestLength = static_cast<double>(curLength - promptLength);
        const float bestPossible = runningScores[0].item<float>() / static_cast<float>(std::pow(bestLength, beam.lengthPenalty));
        const float worstFinished = finishedScores.min().item<float>();
        bool canImprove = false;
        for (std::int64_t b = 0; b < B; ++b)
            canImprove |= bestPossible > (isFinished[b] ? worstFinished : kFinishedOff);
        heuristicUnsatisfied = heuristicUnsatisfied && canImprove;
        const bool existsOpen = !(std::all_of(isFinished.begin(), isFinished.end(), [](bool f) { return f; }) && beam.earlyStopping);
        const bool validContinuation = !std::all_of(hits.begin(), hits.end(), [](bool h) { return h; });
        if (!(heuristicUnsatisfied && existsOpen && validContinuation)) break;

        // Continue: reorder the cache to the chosen source beams (unless every beam continues itself, as
        // it mostly does once the beams settle) and feed their new tokens.
        std::vector<std::int64_t> chosenSources(B);
        bool identity = true;
        for (std::int64_t b = 0; b < B; ++b)
            identity &= (chosenSources[b] = sourceBeams[nextBeams[b]]) == b;
        if (!identity) session.reorder(chosenSources);
        running = std::move(nextRunning);
        for (std::int64_t b = 0; b < B; ++b)
            inputs[static_cast<std::size_t>(b)] = running[b].back();
    }
    const auto& best = finished[0];
    return std::vector<TokenId>(best.begin() + promptLength, best.end());
}

}  // namespace dragoman
