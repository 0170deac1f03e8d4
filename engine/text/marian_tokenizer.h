#pragma once
// MarianTokenizer: source.spm / target.spm pieces mapped through vocab.json (unknown pieces become <unk>),
// </s> appended; a leading ">>lang<<" code is kept as one token, as transformers does.
#include "text/sentencepiece.h"
#include "text/tokenizer.h"

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

namespace dragoman {

class MarianTokenizer : public Tokenizer {
public:
    explicit MarianTokenizer(const std::filesystem::path& dir);

    std::vector<TokenId> encode(std::string_view text) const override;
    std::vector<TokenId> encodeText(std::string_view text) const override;
    std::string decode(const std::vector<TokenId>& ids, bool skipSpecial = true) const override;
    bool isSpecial(TokenId id) const override { return id == eos_ || id == unk_ || id == pad_; }
    std::size_t vocabSize() const override { return pieces_.size(); }

    TokenId eosId() const { return eos_; }
    TokenId padId() const { return pad_; }
    // The target-language tokens of a multilingual model (">>fra<<", ...), in vocabulary order.
    std::vector<std::string> languageTokens() const override;
    // The same for the folder `dir`, from its vocab.json alone (listing a folder's languages loads no sentencepiece
    // model). Throws Error("tokenizer") for a vocab.json the tokenizer would refuse.
    static std::vector<std::string> languageTokensIn(const std::filesystem::path& dir);
    std::optional<TokenId> idOf(std::string_view piece) const override;

private:
    // One model for both where the two files are the same (a shared vocabulary): loading one takes 20-30 ms.
    std::shared_ptr<const SentencePiece> source_;
    std::shared_ptr<const SentencePiece> target_;
    std::unordered_map<std::string, TokenId> ids_;
    std::vector<std::string> pieces_;  // by id
    TokenId eos_ = 0, unk_ = 1, pad_ = -1;
};

}  // namespace dragoman
