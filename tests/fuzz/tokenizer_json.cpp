// tokenizer.json as a model folder ships it: loaded or refused with Error("tokenizer"); a loaded one encodes
// and decodes a fixed sentence without crashing, and decodes to valid UTF-8.
#include "fuzz_support.h"
#include "text/tokenizer.h"
#include "text/utf8.h"
#include "util/error.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    const auto dir = fuzz::scratch() / "tokenizer";
    // Each loaded tokenizer.json leaves its compiled form in the model cache: a scratch one, emptied each time.
    static const bool isolated = [] {
        ::setenv("DRAGOMAN_MODELS", (fuzz::scratch() / "models").c_str(), 1);
        return std::filesystem::create_directories(fuzz::scratch() / "tokenizer");
    }();
    (void)isolated;
    std::filesystem::remove_all(fuzz::scratch() / "models");
    fuzz::writeScratch("tokenizer/tokenizer.json", fuzz::text(data, size));
    try {
        const auto tokenizer = loadTokenizerJson(dir);
        const auto ids = tokenizer->encode("Hello, wörld! 你好 123");
        FUZZ_CHECK(utf8::isValid(tokenizer->decode(ids, false)));
    } catch (const Error&) {
    }
    return 0;
}
