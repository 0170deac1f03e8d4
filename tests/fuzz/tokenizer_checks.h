#pragma once
// What both tokenizer targets check: ids inside the vocabulary, and any id sequence decoding to valid UTF-8
// the same whole as streamed token by token (the window shows the streamed deltas, the CLI the whole).
#include "fuzz_support.h"
#include "text/streaming_detokenizer.h"
#include "text/tokenizer.h"
#include "text/utf8.h"
#include "util/error.h"

#include <cstring>
#include <vector>

namespace dragoman::fuzz {

inline void checkIds(const Tokenizer& tokenizer, const std::vector<TokenId>& ids) {
    for (auto id : ids)
        FUZZ_CHECK(id >= 0 && static_cast<std::size_t>(id) < tokenizer.vocabSize());
}

// The input read as token ids, two bytes each, up to `pastVocabulary` beyond the vocabulary's end.
inline void checkDecoding(const Tokenizer& tokenizer, const std::uint8_t* data, std::size_t size, std::size_t pastVocabulary) {
    std::vector<TokenId> ids;
    for (std::size_t i = 0; i + 1 < size; i += 2) {
        std::uint16_t id = 0;
        std::memcpy(&id, data + i, 2);
        ids.push_back(static_cast<TokenId>(id % (tokenizer.vocabSize() + pastVocabulary)));
    }
    try {
        const auto whole = tokenizer.decode(ids);
        FUZZ_CHECK(utf8::isValid(whole));
        StreamingDetokenizer stream(tokenizer);
        std::string streamed;
        for (auto id : ids) {
            const auto delta = stream.push(id);
            FUZZ_CHECK(utf8::isValid(delta));
            streamed += delta;
        }
        streamed += stream.finish();
        FUZZ_CHECK(streamed == whole);
    } catch (const Error&) {
    }
}

}  // namespace dragoman::fuzz
