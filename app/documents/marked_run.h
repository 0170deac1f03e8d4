#pragma once
// One segment assembled from prose and the inline markup inside it (Markdown emphasis and links, HTML inline
// elements), in reading order. Markup that opens and closes in proper nesting becomes a tagged span
// (inline_markup.h); standalone markup (a code span, an image, a line break, or an opener whose closer never came)
// becomes an empty pair, which keeps its place. The formats only say what each piece of markup is.
#include "documents/segmented_document.h"

#include <string>
#include <string_view>
#include <vector>

namespace dragoman::documents {

class MarkedRun {
public:
    void text(std::string_view words);
    // A span's start and end as written; `key` pairs them ("**", "a").
    void open(std::string markup, std::string key);
    void close(std::string markup, std::string key);
    // A delimiter that may open or close (Markdown's `*`): closes the innermost open span with its key, else
    // opens one when it may, else is text.
    void delimiter(std::string markup, bool canOpen, bool canClose);
    void code(std::string markup);
    bool empty() const { return items_.empty(); }
    // The run as one segment (as plain text pieces around the markup when its words hold something that reads
    // as a tag); `shape` turns words into document text.
    void writeTo(SegmentWriter& out, const SegmentWriter::Shape& shape = {});

private:
    struct Item {
        enum class Kind { Text, Open, Close, Code } kind;
        std::string text;  // words, or the markup as written
        std::string key;
        int pair = -1;             // Open/Close: the index of the other end, once matched
        bool textIfAlone = false;  // an emphasis opener never closed is a literal asterisk
    };
    std::vector<Item> items_;
    std::vector<std::size_t> openItems_;  // Open items not yet closed, innermost last
};

}  // namespace dragoman::documents
