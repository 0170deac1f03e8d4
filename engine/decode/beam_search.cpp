#include "decode/beam_search.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace dragoman {
namespace {

constexpr float kFinishedOff = -1.0e9f;  // transformers' "not a candidate" score

// torch.topk(values, k): the indices of the k largest values, largest first; equal values by lower index first.
std::vector<std::int64_t> topIndices(const std::vector<float>& values, std::int64_t k) {
    std::vector<std::int64_t> order(values.size());
    std::iota(order.begin(), order.end(), 0);
    const auto n = std::min<std::int64_t>(k, static_cast<std::int64_t>(values.size()));
    std::partial_sort(order.begin(), order.begin() + n, order.end(), [&](std::int64_t a, std::int64_t b) {
        const float x = values[static_cast<std::size_t>(a)], y = values[static_cast<std::size_t>(b)];
        return x > y || (x == y && a < b);
    });
    order.resize(static_cast<std::size_t>(n));
    return order;
}

// log_softmax over each row, in place: x - max - log(sum(exp(x - max))), the sum in double.
void logSoftmaxRows(Logits& logits) {
    for (std::int64_t r = 0; r < logits.rows(); ++r) {
        float* row = logits.row(r);
        const float maximum = *std::max_element(row, row + logits.vocab());
        double sum = 0;
        for (std::int64_t v = 0; v < logits.vocab(); ++v)
            sum += std::exp(static_cast<double>(row[v] - maximum));
        const auto logSum = static_cast<float>(std::log(sum));
        for (std::int64_t v = 0; v < logits.vocab(); ++v)
            row[v] = row[v] - maximum - logSum;
    }
}

}  // namespace

std::vector<TokenId> beamSearch(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options,
                                const BeamOptions& beam) {
    const std::int64_t B = beam.beams;
    const std::int64_t K =
        std::max<std::int64_t>(2, 1 + static_cast<std::int64_t>(options.eosIds.size())) * B;  // max(2, 1 + n_eos) * beams
    const std::int64_t promptLength = static_cast<std::int64_t>(prefix.size());
    const std::int64_t maxLength = promptLength + options.maxNewTokens;
    const auto beams = static_cast<std::size_t>(B);

    std::vector<std::vector<TokenId>> running(beams, prefix), finished(beams, prefix);
    std::vector<float> runningScores(beams, kFinishedOff), finishedScores(beams, kFinishedOff);
    runningScores[0] = 0.0f;
    std::vector<bool> isFinished(beams, false);
    bool heuristicUnsatisfied = true;
    std::int64_t curLength = promptLength;
    // Every running hypothesis fed its last token; the first step feeds the prefix's last token B times.
    std::vector<TokenId> inputs(beams, prefix.back());
    std::vector<float> accumulated;

    for (;;) {
        // The logits are this step's own buffer (a batched step's rows are a slice of one): a copy is worked on.
        const auto stepped = session.next(inputs);
        auto logProbs = Logits::allocate(stepped.rows(), stepped.vocab());
        std::copy_n(stepped.data(), stepped.rows() * stepped.vocab(), logProbs.data());
        logSoftmaxRows(logProbs);
        if (options.processors) options.processors->apply(logProbs, running);
        const auto vocab = logProbs.vocab();
        accumulated.resize(static_cast<std::size_t>(B * vocab));
        for (std::int64_t b = 0; b < B; ++b)
            for (std::int64_t v = 0; v < vocab; ++v)
                accumulated[static_cast<std::size_t>(b * vocab + v)] = logProbs.row(b)[v] + runningScores[static_cast<std::size_t>(b)];
        const auto top = topIndices(accumulated, K);

        std::vector<std::vector<TokenId>> candidates(top.size());
        std::vector<float> topValues(top.size());
        std::vector<std::int64_t> sourceBeams(top.size());
        std::vector<bool> hits(top.size());
        const bool atMax = curLength + 1 >= maxLength;
        for (std::size_t k = 0; k < top.size(); ++k) {
            topValues[k] = accumulated[static_cast<std::size_t>(top[k])];
            sourceBeams[k] = top[k] / vocab;
            const TokenId token = top[k] % vocab;
            candidates[k] = running[static_cast<std::size_t>(sourceBeams[k])];
            candidates[k].push_back(token);
            hits[k] = isEndOfSequence(token, options.eosIds) || atMax;
        }
        // Running beams for the next step: the best B candidates that did not just finish.
        std::vector<float> runningCandidates(top.size());
        for (std::size_t k = 0; k < top.size(); ++k)
            runningCandidates[k] = topValues[k] + (hits[k] ? 1.0f : 0.0f) * kFinishedOff;
        const auto nextBeams = topIndices(runningCandidates, B);
        std::vector<std::vector<TokenId>> nextRunning(beams);
        for (std::size_t b = 0; b < beams; ++b) {
            nextRunning[b] = candidates[static_cast<std::size_t>(nextBeams[b])];
            runningScores[b] = runningCandidates[static_cast<std::size_t>(nextBeams[b])];
        }

        // Finished hypotheses: candidates that ended here and rank among the top B, merged with those kept.
        const double generatedLength = static_cast<double>(curLength + 1 - promptLength);
        const auto lengthDivisor = static_cast<float>(std::pow(generatedLength, beam.lengthPenalty));
        const bool allFinished = std::all_of(isFinished.begin(), isFinished.end(), [](bool f) { return f; });
        std::vector<float> mergedScores(finishedScores);
        for (std::size_t k = 0; k < top.size(); ++k) {
            const bool justFinished = hits[k] && static_cast<std::int64_t>(k) < B;
            const float offset = ((allFinished && beam.earlyStopping) ? kFinishedOff : 0.0f) +
                                 (heuristicUnsatisfied ? 0.0f : kFinishedOff) + (justFinished ? 0.0f : kFinishedOff);
            mergedScores.push_back(topValues[k] / lengthDivisor + offset);
        }
        const auto keep = topIndices(mergedScores, B);
        std::vector<std::vector<TokenId>> nextFinished(beams);
        std::vector<bool> nextIsFinished(beams);
        std::vector<float> nextFinishedScores(beams);
        for (std::size_t b = 0; b < beams; ++b) {
            const auto index = keep[b];
            nextFinishedScores[b] = mergedScores[static_cast<std::size_t>(index)];
            if (index < B) {
                nextFinished[b] = finished[static_cast<std::size_t>(index)];
                nextIsFinished[b] = isFinished[static_cast<std::size_t>(index)];
            } else {
                nextFinished[b] = candidates[static_cast<std::size_t>(index - B)];
                nextIsFinished[b] = hits[static_cast<std::size_t>(index - B)] && (index - B) < B;
            }
        }
        finishedScores = std::move(nextFinishedScores);
        finished = std::move(nextFinished);
        isFinished = std::move(nextIsFinished);
        curLength += 1;

        // Early-stop heuristic and loop condition, as transformers.
        const double bestLength = static_cast<double>(curLength - promptLength);
        const float bestPossible = runningScores[0] / static_cast<float>(std::pow(bestLength, beam.lengthPenalty));
        const float worstFinished = *std::min_element(finishedScores.begin(), finishedScores.end());
        bool canImprove = false;
        for (std::size_t b = 0; b < beams; ++b)
            canImprove |= bestPossible > (isFinished[b] ? worstFinished : kFinishedOff);
        heuristicUnsatisfied = heuristicUnsatisfied && canImprove;
        const bool existsOpen = !(std::all_of(isFinished.begin(), isFinished.end(), [](bool f) { return f; }) && beam.earlyStopping);
        const bool validContinuation = !std::all_of(hits.begin(), hits.end(), [](bool h) { return h; });
        if (!(heuristicUnsatisfied && existsOpen && validContinuation)) break;

        // Continue: reorder the cache to the chosen source beams (unless every beam continues itself, as
        // it mostly does once the beams settle) and feed their new tokens.
        std::vector<std::int64_t> chosenSources(beams);
        bool identity = true;
        for (std::size_t b = 0; b < beams; ++b)
            identity &= (chosenSources[b] = sourceBeams[static_cast<std::size_t>(nextBeams[b])]) == static_cast<std::int64_t>(b);
        if (!identity) session.reorder(chosenSources);
        running = std::move(nextRunning);
        for (std::size_t b = 0; b < beams; ++b)
            inputs[b] = running[b].back();
    }
    const auto& best = finished[0];
    return std::vector<TokenId>(best.begin() + promptLength, best.end());
}

}  // namespace dragoman
