#include "text/bpe_tokenizer.h"
#include "text/marian_tokenizer.h"
#include "text/tokenizer.h"
#include "util/error.h"
#include "util/log.h"

#include <chrono>

namespace dragoman {
namespace {

template <typename Make>
std::unique_ptr<Tokenizer> timed(const std::filesystem::path& dir, Make make) {
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<Tokenizer> tokenizer = make();
    // Start-up time is watched closely: a 120k-token tokenizer.json must not dominate it.
    log::logger().info("tokenizer of {} loaded in {:.1f} ms ({} tokens)", dir.string(),
                       std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count(), tokenizer->vocabSize());
    return tokenizer;
}

}  // namespace

std::unique_ptr<Tokenizer> loadMarianTokenizer(const std::filesystem::path& dir) {
    return timed(dir, [&] { return std::make_unique<MarianTokenizer>(dir); });
}

std::unique_ptr<Tokenizer> loadTokenizerJson(const std::filesystem::path& dir) {
    if (!std::filesystem::exists(dir / "tokenizer.json")) throw Error("tokenizer", "no tokenizer.json in " + dir.string());
    return timed(dir, [&] { return std::make_unique<BpeTokenizer>(dir / "tokenizer.json"); });
}

}  // namespace dragoman
