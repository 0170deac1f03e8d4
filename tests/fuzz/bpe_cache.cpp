// The compiled form of a tokenizer.json that our cache keeps (text/bpe_model.h): a damaged or foreign file is
// refused (deserialize() is false, the tokenizer is compiled again), never trusted into reading out of bounds.
// One that is accepted encodes, every id inside the vocabulary, and survives a second round trip. Both ways of
// reading it: copied, and in place (as from the mapped cache file; the input is aligned as a mapping is).
#include "fuzz_support.h"
#include "text/bpe_model.h"

namespace {

void checkAccepted(const dragoman::BpeModel& model) {
    using namespace dragoman;
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
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    const auto text = fuzz::text(data, size);
    BpeModel copied;
    const bool accepted = copied.deserialize(text);
    if (accepted) checkAccepted(copied);
    // In place: the model reads the input where it lies; the backing (here owning nothing) is what it keeps alive.
    BpeModel inPlace;
    const bool acceptedInPlace = inPlace.deserialize(text, std::shared_ptr<const void>(data, [](const void*) {}));
    FUZZ_CHECK(acceptedInPlace == accepted);
    if (acceptedInPlace) checkAccepted(inPlace);
    return 0;
}
