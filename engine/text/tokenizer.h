#pragma once
// What every model's tokenizer offers: source text to ids as Hugging Face gives them, and ids back to text.
#include <cstdint>
#include <filesystem>
#include <memory>
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
};

// The tokenizer a model folder declares (Marian sentencepiece, or tokenizer.json). Throws Error("tokenizer").
std::unique_ptr<Tokenizer> loadTokenizer(const std::filesystem::path& dir, const std::string& modelType);

}  // namespace dragoman
