#pragma once
// A document taken apart for translation: the segments of text to translate, in reading order, and what puts
// the document back together around their translations. Everything that is not a segment (markup, code,
// timings, layout) is rebuilt byte for byte.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace dragoman::documents {

struct SegmentedDocument {
    std::vector<std::string> segments;
    // Which segments carry inline markup as tags (inline_markup.h), their translations too; empty: none.
    std::vector<bool> tagged;
    // Receives one translation per segment, in order; returns the whole document.
    std::function<std::string(const std::vector<std::string>& translations)> rebuild;
    // Text with letters that could not be read as the format says and is kept as it is, untranslated (a subtitle
    // block without a timing line): one note each, "line N: ...", for the person to hear of it.
    std::vector<std::string> keptAsIs;
};

// Collects segments and the literal text between them; rebuild() interleaves them again. The formats' parsers
// write into one of these.
class SegmentWriter {
public:
    using Shape = std::function<std::string(const std::string& translation)>;

    void literal(std::string_view text) { pieces_.back() += text; }
    // A segment with letters is translated; one without (numbers, dates, punctuation, symbols) stays as it is.
    // `shape` turns its translation into document text (escaping, wrapping); none: as it is.
    void segment(std::string_view text, Shape shape = {});
    // A segment with inline markup: `tagged` in inline_markup.h's notation, spans[N-1] the document's markup for
    // <sN> and </sN>; `shape` turns the text between the tags into document text. Without spans: segment().
    struct Span {
        std::string open, close;
    };
    void markedSegment(std::string_view tagged, std::vector<Span> spans, Shape shape = {});
    // Notes text written as literal() because it did not read as the format says (SegmentedDocument::keptAsIs).
    void keptAsIs(std::string note) { keptAsIs_.push_back(std::move(note)); }
    SegmentedDocument finish();

private:
    std::vector<std::string> pieces_{std::string()};  // literal text before each segment, and after the last
    std::vector<std::string> segments_;
    std::vector<Shape> shapes_;
    std::vector<bool> tagged_;
    std::vector<std::string> keptAsIs_;
};

// The part of `text` worth translating, [begin, end): without the whitespace around it, nor punctuation that
// continues what came before it (": the weather..." after a bold label); {npos, npos} when it has no letters.
std::pair<std::size_t, std::size_t> translatableCore(std::string_view text);

// True when `text` has a letter (in any script): only such text is worth sending to a model.
bool hasLetters(std::string_view text);

// Splits inline markup out of a line of text: `protect` finds the next protected span (code, a URL, a tag) at
// or after a position and returns [begin, end), or npos. Text between spans becomes segments.
void writeWithProtectedSpans(SegmentWriter& out, std::string_view text,
                             const std::function<std::pair<std::size_t, std::size_t>(std::string_view, std::size_t)>& protect);

}  // namespace dragoman::documents
