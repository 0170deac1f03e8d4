#include "decode/logits_processors.h"

#include <algorithm>
#include <limits>
#include <map>

namespace dragoman {

LogitsProcessors::LogitsProcessors(const GenerationConfig& config, std::int64_t maxLength)
    : repetitionPenalty_(config.repetitionPenalty),
      noRepeatNgram_(config.noRepeatNgramSize),
      forcedEos_(config.forcedEosId),
      maxLength_(maxLength) {
    for (const auto& words : config.badWordsIds) {
        if (words.size() == 1)
            badSingle_.push_back(words[0]);
        else if (!words.empty())
            badSequences_.push_back(words);
    }
}

bool LogitsProcessors::empty() const {
    return repetitionPenalty_ == 1.0 && noRepeatNgram_ == 0 && badSingle_.empty() && badSequences_.empty() && !forcedEos_;
}

void LogitsProcessors::apply(Logits& scores, const std::vector<std::vector<TokenId>>& sequences) const {
    const float minusInf = -std::numeric_limits<float>::infinity();
    const auto vocab = scores.vocab();
    for (std::size_t b = 0; b < sequences.size() && static_cast<std::int64_t>(b) < scores.rows(); ++b) {
        float* row = scores.row(static_cast<std::int64_t>(b));
        const auto& seq = sequences[b];
        if (repetitionPenalty_ != 1.0) {
            // RepetitionPenaltyLogitsProcessor: every token already in the sequence, once.
            std::vector<bool> seen(vocab, false);
            for (auto id : seq) {
                if (id < 0 || id >= vocab || seen[id]) continue;
                seen[id] = true;
                row[id] = row[id] < 0 ? row[id] * static_cast<float>(repetitionPenalty_) : row[id] / static_cast<float>(repetitionPenalty_);
            }
        }
        const auto n = noRepeatNgram_;
        if (n > 0 && static_cast<std::int64_t>(seq.size()) + 1 >= n) {
            // NoRepeatNGramLogitsProcessor: ban tokens that would complete an n-gram seen before.
            const auto start = seq.size() - (n - 1);
            for (std::size_t i = 0; i + n <= seq.size(); ++i)
                if (std::equal(seq.begin() + i, seq.begin() + i + n - 1, seq.begin() + start)) row[seq[i + n - 1]] = minusInf;
        }
        for (auto id : badSingle_)
            if (id >= 0 && id < vocab) row[id] = minusInf;
        for (const auto& words : badSequences_) {
            // NoBadWordsLogitsProcessor, multi-token entries: ban the last token when the prefix just occurred.
            const auto prefix = words.size() - 1;
            if (seq.size() >= prefix && std::equal(words.begin(), words.end() - 1, seq.end() - prefix) && words.back() < vocab)
                row[words.back()] = minusInf;
        }
        if (forcedEos_ && static_cast<std::int64_t>(seq.size()) == maxLength_ - 1) {
            // ForcedEOSTokenLogitsProcessor: at the last position only EOS remains.
            std::fill(row, row + vocab, minusInf);
            row[*forcedEos_] = 0.0f;
        }
    }
}

}  // namespace dragoman
