#pragma once
// Turns generated token ids into text deltas as they arrive. A delta is only emitted once it is final:
// never half a UTF-8 character (a trailing U+FFFD or incomplete sequence is held back) and never trailing
// whitespace that a later token or the final strip could change. The concatenated deltas equal
// tokenizer.decode(all ids) exactly; finish() returns whatever is still held back.
#include "text/tokenizer.h"

#include <string>
#include <vector>

namespace dragoman {

class StreamingDetokenizer {
public:
    explicit StreamingDetokenizer(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}

    // The text that became final with this token (often empty).
    std::string push(TokenId id);
    // The rest of the text: all pushes' deltas and this add up to tokenizer.decode(ids).
    std::string finish();

private:
    const Tokenizer& tokenizer_;
    std::vector<TokenId> ids_;
    std::string emitted_;
};

// Length of the longest prefix of `text` that ends on a complete UTF-8 character and not in U+FFFD.
std::size_t completeUtf8Prefix(const std::string& text);

}  // namespace dragoman
