// The compiled form of a tokenizer.json that our cache keeps (text/bpe_model.h): a damaged or foreign file is
// refused (deserialize() is false, the tokenizer is compiled again), never trusted into reading out of bounds.
// One that is accepted encodes, every id inside the vocabulary, and survives a second round trip.
#include "fuzz_support.h"
#include "text/bpe_model.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    BpeModel model;
    if (!model.deserialize(fuzz::text(data, size))) return 0;
    for (const std::string_view piece : {"hello", " world", "\xe4\xbd\xa0\xe5\xa5\xbd", "\xff\x00\x80"}) {
        std::vector<TokenId> ids;
        model.encodeBytes(piece, ids);
        for (auto id : ids)
            FUZZ_CHECK(id >= 0 && static_cast<std::size_t>(id) < model.size());
    }
    std::string again;
    model.serialize(again);
    BpeModel reread;
    FUZZ_CHECK(reread.deserialize(again));
    FUZZ_CHECK(reread.size() == model.size());
    return 0;
}
