// The byte-level BPE tokenizer (HY-MT's tokenizer.json) on any input: arbitrary bytes encode or are refused
// with Error, every id inside the vocabulary, valid UTF-8 coming back unchanged; any id sequence decodes to
// valid UTF-8, the same whole as streamed (tokenizer_checks.h).
#include "tokenizer_checks.h"

namespace {

const dragoman::Tokenizer& tokenizer() {
    static const auto loaded = dragoman::loadTokenizerJson(dragoman::fuzz::fixture("hunyuan-tiny"));
    return *loaded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    const auto& bpe = tokenizer();
    const auto text = fuzz::text(data, size);
    try {
        fuzz::checkIds(bpe, bpe.encode(text));
        if (utf8::isValid(text)) FUZZ_CHECK(bpe.decode(bpe.encodePlain(text), false) == text);
    } catch (const Error&) {
    }
    fuzz::checkDecoding(bpe, data, size, 64);
    return 0;
}
