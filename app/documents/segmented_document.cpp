#include "documents/segmented_document.h"

#include "documents/inline_markup.h"

#include <QString>

namespace dragoman::documents {

bool hasLetters(std::string_view text) {
    const auto decoded = QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
    for (const QChar c : decoded)
        if (c.isLetter()) return true;
    return false;
}

std::pair<std::size_t, std::size_t> translatableCore(std::string_view text) {
    // Surrounding whitespace stays literal: models drop it, and the layout needs it. So does punctuation that
    // continues what came before the segment (": the weather..." after a bold label).
    const auto first = text.find_first_not_of(" \t\r\n:;,)]}|/");
    if (first == std::string_view::npos || !hasLetters(text)) return {std::string_view::npos, std::string_view::npos};
    return {first, text.find_last_not_of(" \t\r\n") + 1};
}

void SegmentWriter::segment(std::string_view text, Shape shape) {
    const auto [first, end] = translatableCore(text);
    if (first == std::string_view::npos) {  // numbers, symbols: as they are, in the document's notation
        literal(shape ? shape(std::string(text)) : std::string(text));
        return;
    }
    literal(text.substr(0, first));
    segments_.emplace_back(text.substr(first, end - first));
    shapes_.push_back(std::move(shape));
    tagged_.push_back(false);
    pieces_.emplace_back(text.substr(end));
}

void SegmentWriter::markedSegment(std::string_view tagged, std::vector<Span> spans, Shape shape) {
    if (spans.empty()) return segment(tagged, std::move(shape));
    // Tagged text back into the document: words shaped, tags replaced by the markup they stand for.
    auto render = [spans = std::move(spans), shape = std::move(shape)](const std::string& translation) {
        const auto parts = parseMarked(translation, static_cast<int>(spans.size()));
        if (!parts) return shape ? shape(translation) : translation;  // the document translator never hands these over
        std::string out;
        for (const auto& part : *parts) {
            const auto index = static_cast<std::size_t>(part.span) - 1;
            if (part.kind == MarkedPart::Kind::Text)
                out += shape ? shape(part.text) : part.text;
            else
                out += part.kind == MarkedPart::Kind::Open ? spans[index].open : spans[index].close;
        }
        return out;
    };
    const auto first = tagged.find_first_not_of(" \t\r\n");
    const auto parts = parseMarked(tagged, spanCount(tagged));
    if (first == std::string_view::npos || !parts || !hasLetters(withoutTags(*parts))) {
        literal(render(std::string(tagged)));
        return;
    }
    const auto last = tagged.find_last_not_of(" \t\r\n");
    literal(tagged.substr(0, first));
    segments_.emplace_back(tagged.substr(first, last - first + 1));
    tagged_.push_back(true);
    shapes_.push_back(std::move(render));
    pieces_.emplace_back(tagged.substr(last + 1));
}

SegmentedDocument SegmentWriter::finish() {
    SegmentedDocument doc;
    doc.segments = segments_;
    doc.tagged = tagged_;
    doc.keptAsIs = keptAsIs_;
    doc.rebuild = [pieces = pieces_, shapes = shapes_](const std::vector<std::string>& translations) {
        std::string out = pieces.front();
        for (std::size_t i = 0; i < translations.size() && i + 1 < pieces.size(); ++i)
            out += (shapes[i] ? shapes[i](translations[i]) : translations[i]) + pieces[i + 1];
        return out;
    };
    return doc;
}

void writeWithProtectedSpans(SegmentWriter& out, std::string_view text,
                             const std::function<std::pair<std::size_t, std::size_t>(std::string_view, std::size_t)>& protect) {
    std::size_t at = 0;
    while (at < text.size()) {
        const auto [begin, end] = protect(text, at);
        if (begin == std::string_view::npos) break;
        out.segment(text.substr(at, begin - at));
        out.literal(text.substr(begin, end - begin));
        at = end;
    }
    out.segment(text.substr(at));
}

}  // namespace dragoman::documents
