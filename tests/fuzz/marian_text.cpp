// Marian's sentencepiece path on any input: arbitrary bytes encode (ending in </s>, every id inside the
// vocabulary) or are refused with Error; any id sequence decodes to valid UTF-8, the same whole as streamed
// (tokenizer_checks.h).
#include "tokenizer_checks.h"

namespace {

const dragoman::Tokenizer& tokenizer() {
    static const auto loaded = dragoman::loadMarianTokenizer(dragoman::fuzz::fixture("marian-tiny"));
    return *loaded;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    const auto& marian = tokenizer();
    try {
        const auto ids = marian.encode(fuzz::text(data, size));
        FUZZ_CHECK(!ids.empty());
        fuzz::checkIds(marian, ids);
        FUZZ_CHECK(utf8::isValid(marian.decode(ids)));
    } catch (const Error&) {
    }
    fuzz::checkDecoding(marian, data, size, 16);
    return 0;
}
