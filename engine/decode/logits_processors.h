#pragma once
// Hugging Face's logits processors, in the order generate() applies them: repetition penalty,
// no-repeat n-grams, bad words, forced EOS at the last position.
#include "decode/generation_config.h"

#include "decode/logits.h"
#include "text/tokenizer.h"

#include <optional>

#include <vector>

namespace dragoman {

class LogitsProcessors {
public:
    LogitsProcessors() = default;  // none: raw scores
    // From a generation config; `maxLength` counts the decoder start (or prompt) tokens too.
    LogitsProcessors(const GenerationConfig& config, std::int64_t maxLength);

    // scores [B, V] (modified in place); sequences: every hypothesis's tokens so far, one per row.
    void apply(Logits& scores, const std::vector<std::vector<TokenId>>& sequences) const;
    bool empty() const;

private:
    double repetitionPenalty_ = 1.0;
    std::int64_t noRepeatNgram_ = 0;
    std::vector<TokenId> badSingle_;
    std::vector<std::vector<TokenId>> badSequences_;
    std::optional<TokenId> forcedEos_;
    std::int64_t maxLength_ = 0;
};

}  // namespace dragoman
