#pragma once
// What every model's tokenizer offers: source text to ids as Hugging Face gives them, and ids back to text.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dragoman {

using TokenId = std::int64_t;

class Tokenizer {
public:
    virtual ~Tokenizer() = default;
    // encode(text, add_special_tokens=True) of the model's own tokenizer.
    virtual std::vector<TokenId> encode(std::string_view text) const = 0;
    // decode(ids, skip_special_tokens=skipSpecial, clean_up_tokenization_spaces=False).
    virtual std::string decode(const std::vector<TokenId>& ids, bool skipSpecial = true) const = 0;
    virtual bool isSpecial(TokenId id) const = 0;
    virtual std::size_t vocabSize() const = 0;
    // The id of a token spelled exactly so (a special or added token, a vocabulary entry), if any.
    virtual std::optional<TokenId> idOf(std::string_view token) const = 0;
    // encode(text) of text as the user wrote it: no markup in it is taken for a special token (a Marian source
    // holding ">>" and "<<" is not a language code). The caller adds any language token by id.
    virtual std::vector<TokenId> encodeText(std::string_view text) const { return encode(text); }
    // Ids of text that spells out its own special tokens (a rendered chat template): no post-processor tokens.
    virtual std::vector<TokenId> encodePlain(std::string_view text) const { return encode(text); }
    // Target-language tokens a multilingual model expects in front of the source (">>fra<<", ...); empty if none.
    virtual std::vector<std::string> languageTokens() const { return {}; }
};

// A Marian folder's sentencepiece models and vocab.json, or a tokenizer.json; each load is timed in the log.
// Throws Error("tokenizer"). runtime/architectures.h picks the one a model_type uses.
std::unique_ptr<Tokenizer> loadMarianTokenizer(const std::filesystem::path& dir);
std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path& dir);

}  // namespace dragoman
