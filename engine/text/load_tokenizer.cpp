#include "text/bpe_tokenizer.h"
#include "text/marian_tokenizer.h"
#include "text/tokenizer.h"
#include "util/error.h"
#include "util/log.h"

#include <chrono>

namespace dragoman {

std::unique_ptr<Tokenizer> loadTokenizer(const std::filesystem::path& dir, const std::string& modelType) {
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<Tokenizer> tokenizer;
    if (modelType == "marian")
        tokenizer = std::make_unique<MarianTokenizer>(dir);
    else if (std::filesystem::exists(dir / "tokenizer.json"))
        tokenizer = std::make_unique<BpeTokenizer>(dir / "tokenizer.json");
    else
        throw Error("tokenizer", "no tokenizer for model_type '" + modelType + "' in " + dir.string() + " (expected tokenizer.json)");
    // Start-up time is watched closely: a 120k-token tokenizer.json must not dominate it.
    log::logger().info("tokenizer of {} loaded in {:.1f} ms ({} tokens)", dir.string(),
                       std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), tokenizer->vocabSize());
    return tokenizer;
}

}  // namespace dragoman
