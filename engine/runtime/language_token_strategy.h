#pragma once
// Translation with a language-token seq2seq model (OPUS-MT / Marian): each paragraph is split into
// sentences (ICU), a multilingual model gets its target-language token (">>deu<<") in front of each, a
// sentence longer than the model's positions goes in consecutive pieces, and greedy output streams through
// the detokenizer (beam search emits each sentence when it is done). Any encoder-decoder model (models/seq2seq.h):
// the CPU kernels' Marian without libtorch, the libtorch one through its view.
#include "decode/step_batcher.h"
#include "runtime/runnable_model.h"

namespace dragoman {

class LanguageTokenStrategy : public TranslationStrategy {
public:
    // `model` must outlive the strategy (a RunnableModel owns its strategy).
    explicit LanguageTokenStrategy(const RunnableModel& model);

    std::vector<std::string> targetLanguages() const override { return targets_; }
    std::pair<std::string, std::string> fixedPair() const override { return pair_; }
    std::vector<std::string> sourceLanguages() const override { return sources_; }
    bool supportsBeamSearch() const override { return true; }
    int encodesAhead() const override { return static_cast<int>(kDecodedTogether); }
    void check(const TranslationRequest& request) const override;
    std::string translateParagraph(const std::string& paragraph, TranslationJob& job) const override;
    // Each sentence, with the target's token in front where the model has them.
    std::vector<std::string> prompts(const std::string& paragraph, const TranslationRequest& request) const override;

private:
    // Requests whose steps run as one at most (StepBatcher's maxRows); more wait for a place, their sources encoded.
    static constexpr std::int64_t kDecodedTogether = 16;
    // A sentence's source ids (the language token first where the model has them), in consecutive pieces where it
    // is longer than the model's positions.
    std::vector<std::vector<TokenId>> sourcePieces(const std::string& sentence, const std::string& languageToken) const;
    // A sentence whose translation could run past the model's output cap (generation_config's max_length: 256 tokens
    // for the bundled model, where a 180-token sentence came back cut off mid-list) in clauses of at most `budget`
    // source tokens, split at the clause mark (or else the space) nearest the middle; a sentence with neither stays
    // whole. Each clause is translated on its own and joined by a space.
    std::vector<std::string> clausesOf(const std::string& sentence, std::size_t budget) const;
    // Decodes each piece from its remembered encoding (sources[i] for pieces[i]), streaming the output.
    std::string decodeSentence(const std::vector<std::vector<TokenId>>& pieces,
                               const std::vector<std::shared_ptr<const SourceMemory>>& sources, TranslationJob& job) const;
    std::string languageToken(const std::string& to) const;

    const RunnableModel& model_;
    const Seq2SeqModel& network_;
    std::vector<std::string> modelLanguageTokens_;
    std::vector<std::string> targets_, sources_;
    std::pair<std::string, std::string> pair_;
    // Requests translating at the same time (threads of the server, `translate --batch`, a document's
    // segments) share their decoding steps.
    mutable StepBatcher batcher_;
};

}  // namespace dragoman
