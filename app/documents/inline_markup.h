#pragma once
// Inline markup inside a segment (bold words, a link, a run with other formatting, XLIFF's paired codes) in the
// notation of HY-MT's formatted-translation prompt: each marked span as <sN>…</sN>, numbered 1, 2, ... in the
// order the spans open. A model with that prompt translates the sentence whole and keeps the tags where the words
// went; its answer is used only when every tag is there exactly once, properly nested. Any other model, or an
// answer that lost a tag, gets the text between the tags translated piece by piece.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dragoman::documents {

struct MarkedPart {
    enum class Kind { Text, Open, Close } kind = Kind::Text;
    std::string text;  // Text: the words
    int span = 0;      // Open, Close: 1-based
};

// Whether `text` can go into a tagged segment: it holds nothing that reads as one of the tags.
bool taggable(std::string_view text);
// The tag notation for span `n`.
std::string openTag(int n);
std::string closeTag(int n);
// The number of spans a tagged segment written by a format has.
int spanCount(std::string_view tagged);
// A tagged text taken apart: nullopt unless spans 1..`spans` each open and close exactly once, nested, with no
// other <sN> tag. Adjacent text is merged.
std::optional<std::vector<MarkedPart>> parseMarked(std::string_view tagged, int spans);
// The text without its tags.
std::string withoutTags(const std::vector<MarkedPart>& parts);
std::string joinMarked(const std::vector<MarkedPart>& parts);

}  // namespace dragoman::documents
