#include "models/causal_lm.h"

#include "util/error.h"

#include <algorithm>

namespace dragoman {

Logits CausalLanguageModel::stepMany(const std::vector<CausalState*>& states, const std::vector<TokenId>& ids) const {
    if (states.empty() || ids.size() != states.size()) throw Error("input", "a batched step feeds one token to each sequence");
    const auto vocab = vocabSize();
    auto logits = Logits::allocate(static_cast<std::int64_t>(states.size()), vocab);
    for (std::size_t i = 0; i < states.size(); ++i) {
        const auto row = forward(*states[i], {ids[i]});
        std::copy(row.row(0), row.row(0) + vocab, logits.row(static_cast<std::int64_t>(i)));
    }
    return logits;
}

}  // namespace dragoman
