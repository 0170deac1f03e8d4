#pragma once
// A Hugging Face tokenizer.json with a byte-level BPE model (HY-MT1.5, Hunyuan, Qwen, GPT-2 style):
// added tokens cut out first (leftmost-longest), then the normalizer, the pre-tokenizer Sequence (Split
// regexes on PCRE2, ByteLevel), BPE merges by rank and the post-processor's template. Decoding maps byte
// stand-ins back to bytes and repairs invalid UTF-8 with U+FFFD, as tokenizers does.
#include "text/bpe_model.h"
#include "text/regex_split.h"
#include "text/tokenizer.h"

#include <array>
#include <filesystem>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace dragoman {

class BpeTokenizer : public Tokenizer {
public:
    // Throws Error("tokenizer") naming the file and the unsupported or malformed part.
    explicit BpeTokenizer(const std::filesystem::path& tokenizerJson);

    // Throws Error("input") for text that is not valid UTF-8.
    std::vector<TokenId> encode(std::string_view text) const override;
    // Without the post-processor's special tokens (add_special_tokens=False).
    std::vector<TokenId> encodePlain(std::string_view text) const override;
    std::string decode(const std::vector<TokenId>& ids, bool skipSpecial = true) const override;
    bool isSpecial(TokenId id) const override;
    std::size_t vocabSize() const override { return vocabSize_; }

    // Added tokens first, then the BPE vocabulary.
    std::optional<TokenId> idOf(std::string_view token) const override;
    std::optional<std::string> tokenText(TokenId id) const;

private:
    struct Added {
        std::string content;
        TokenId id;
        bool special;
        bool lstrip = false, rstrip = false, singleWord = false;  // tokenizers' AddedToken options
    };
    enum class Normalization { None, NFC, NFKC, NFD, NFKD };

    void load(const std::filesystem::path& tokenizerJson);
    void appendSegment(std::string_view segment, std::vector<TokenId>& out) const;

    BpeModel model_;
    std::vector<Added> added_;
    std::unordered_map<TokenId, std::size_t> addedById_;
    std::array<std::vector<std::size_t>, 256> addedByFirstByte_;  // indices into added_, longest first
    Normalization normalization_ = Normalization::None;
    std::vector<RegexSplit> splits_;
    bool byteLevel_ = false, addPrefixSpace_ = false;
    std::vector<TokenId> prefix_, suffix_;  // the post-processor's single-sequence template
    std::size_t vocabSize_ = 0;
};

}  // namespace dragoman
