#include "text/bpe_tokenizer.h"
#include "text/marian_tokenizer.h"
#include "text/tokenizer.h"
#include "util/error.h"

namespace dragoman {

std::unique_ptr<Tokenizer> loadTokenizer(const std::filesystem::path& dir, const std::string& modelType) {
    if (modelType == "marian") return std::make_unique<MarianTokenizer>(dir);
    if (std::filesystem::exists(dir / "tokenizer.json")) return std::make_unique<BpeTokenizer>(dir / "tokenizer.json");
    throw Error("tokenizer", "no tokenizer for model_type '" + modelType + "' in " + dir.string() + " (expected tokenizer.json)");
}

}  // namespace dragoman
