#include "text/streaming_detokenizer.h"

#include "util/log.h"

namespace dragoman {
namespace {

bool isSpace(unsigned char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

}  // namespace

std::size_t completeUtf8Prefix(const std::string& text) {
    std::size_t good = 0;
    for (std::size_t i = 0; i < text.size();) {
        const auto c = static_cast<unsigned char>(text[i]);
        const std::size_t length = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
        if (i + length > text.size()) break;  // cut in the middle of a character
        // U+FFFD (EF BF BD) is what a decoder writes for bytes still waiting for their continuation.
        if (length == 3 && c == 0xEF && static_cast<unsigned char>(text[i + 1]) == 0xBF && static_cast<unsigned char>(text[i + 2]) == 0xBD)
            break;
        i += length;
        good = i;
    }
    return good;
}

std::string StreamingDetokenizer::push(TokenId id) {
    ids_.push_back(id);
    const std::string text = tokenizer_.decode(ids_);
    std::size_t stable = completeUtf8Prefix(text);
    while (stable > 0 && isSpace(static_cast<unsigned char>(text[stable - 1])))
        --stable;
    if (stable <= emitted_.size() || text.compare(0, emitted_.size(), emitted_) != 0) return {};
    std::string delta = text.substr(emitted_.size(), stable - emitted_.size());
    emitted_ += delta;
    return delta;
}

std::string StreamingDetokenizer::finish() {
    const std::string text = tokenizer_.decode(ids_);
    if (text.compare(0, emitted_.size(), emitted_) != 0) {
        // Cannot happen for prefix-stable decoders; if it does, the stream already showed a different text.
        log::logger().warn("streamed text '{}' is not a prefix of the final text '{}'", emitted_, text);
        return {};
    }
    std::string rest = text.substr(emitted_.size());
    emitted_ = text;
    return rest;
}

}  // namespace dragoman
