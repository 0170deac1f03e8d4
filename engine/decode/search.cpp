#include "decode/search.h"

#include "kernels/argmax.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace dragoman {

bool isEndOfSequence(TokenId id, const std::vector<TokenId>& eosIds) {
    return std::find(eosIds.begin(), eosIds.end(), id) != eosIds.end();
}

namespace {

constexpr float kOff = -std::numeric_limits<float>::infinity();  // the warpers' filter value

// TopKLogitsWarper: every score below the k-th largest is filtered out (ties with it stay).
void keepTopK(float* row, std::int64_t vocab, std::int64_t k) {
    if (k <= 0 || k >= vocab) return;
    std::vector<float> values(row, row + vocab);
    std::nth_element(values.begin(), values.begin() + (k - 1), values.end(), std::greater<>());
    const float kth = values[static_cast<std::size_t>(k - 1)];
    for (std::int64_t v = 0; v < vocab; ++v)
        if (row[v] < kth) row[v] = kOff;
}

// TopPLogitsWarper: in ascending order, the tokens whose cumulative probability stays <= 1 - top_p are filtered out,
// the most likely one always kept. Filtered tokens (probability 0) are left out of the sort: after top-k that is
// all but k of them.
void keepTopP(float* row, std::int64_t vocab, double topP) {
    if (topP >= 1.0) return;
    std::vector<std::int64_t> order;
    for (std::int64_t v = 0; v < vocab; ++v)
        if (row[v] != kOff) order.push_back(v);
    if (order.empty()) return;
    std::stable_sort(order.begin(), order.end(), [row](std::int64_t a, std::int64_t b) { return row[a] < row[b]; });
    const float top = row[order.back()];
    float total = 0.0f;
    std::vector<float> probabilities(order.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        total += probabilities[i] = std::exp(row[order[i]] - top);
    float cumulative = 0.0f;
    for (std::size_t i = 0; i + 1 < order.size(); ++i) {
        cumulative += probabilities[i] / total;
        if (cumulative > static_cast<float>(1.0 - topP)) break;
        row[order[i]] = kOff;
    }
}

// One draw from softmax(row): the first token whose cumulative probability passes a uniform number in [0, 1).
TokenId draw(const float* row, std::int64_t vocab, std::mt19937_64& generator) {
    const float top = *std::max_element(row, row + vocab);
    std::vector<double> weights(static_cast<std::size_t>(vocab));
    double total = 0.0;
    for (std::int64_t v = 0; v < vocab; ++v)
        total += weights[static_cast<std::size_t>(v)] = row[v] == kOff ? 0.0 : std::exp(static_cast<double>(row[v] - top));
    const double target = static_cast<double>(generator() >> 11) * 0x1.0p-53 * total;  // 53 random bits
    double cumulative = 0.0;
    TokenId last = -1;
    for (std::int64_t v = 0; v < vocab; ++v) {
        const double w = weights[static_cast<std::size_t>(v)];
        if (w <= 0.0) continue;
        cumulative += w;
        last = v;
        if (cumulative > target) return v;
    }
    return last < 0 ? kernels::firstArgmax(row, vocab) : last;  // rounding at the very end: the last likely token
}

// The search loop both decoders share, driven by the session: `pick` chooses each next token from a step's scores
// (processors applied); the sequence ends at a stop id, at its token limit, or when onToken says so.
template <typename Pick>
std::vector<TokenId> searchDriven(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options, Pick pick) {
    std::vector<std::vector<TokenId>> sequences{prefix};
    std::vector<TokenId> generated;
    if (options.maxNewTokens <= 0) return generated;
    const StepContinuation choose = [&](Logits& scores, std::vector<TokenId>& next) {
        if (options.processors) options.processors->apply(scores, sequences);
        const TokenId last = pick(scores);
        generated.push_back(last);
        sequences[0].push_back(last);
        if (options.onToken && !options.onToken(last)) return false;
        if (isEndOfSequence(last, options.eosIds)) return false;
        if (static_cast<std::int64_t>(generated.size()) >= options.maxNewTokens) return false;
        next.assign(1, last);
        return true;
    };
    session.drive({prefix.back()}, choose, !options.onToken || options.onTokenAnyThread);
    return generated;
}

}  // namespace

std::vector<TokenId> greedySearch(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options) {
    return searchDriven(session, prefix, options, [](const Logits& scores) { return kernels::firstArgmax(scores.row(0), scores.vocab()); });
}

std::vector<TokenId> sampleSearch(DecodingSession& session, const std::vector<TokenId>& prefix, const SearchOptions& options,
                                  const SamplingOptions& sampling) {
    std::mt19937_64 generator(sampling.seed);
    return searchDriven(session, prefix, options, [&](const Logits& scores) {
        float* row = scores.row(0);
        const auto vocab = scores.vocab();
        if (sampling.temperature > 0 && sampling.temperature != 1.0)
            for (std::int64_t v = 0; v < vocab; ++v)
                row[v] /= static_cast<float>(sampling.temperature);
        keepTopK(row, vocab, sampling.topK);
        keepTopP(row, vocab, sampling.topP);
        return draw(row, vocab, generator);
    });
}

}  // namespace dragoman
