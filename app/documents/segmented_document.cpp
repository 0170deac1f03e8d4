#include "documents/segmented_document.h"

#include <QString>

namespace dragoman::documents {

bool hasLetters(std::string_view text) {
    const auto decoded = QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
    for (const QChar c : decoded)
        if (c.isLetter()) return true;
    return false;
}

void SegmentWriter::segment(std::string_view text, Shape shape) {
    // Surrounding whitespace stays literal: models drop it, and the layout needs it. So does punctuation that
    // continues what came before the segment (": the weather..." after a bold label).
    const auto first = text.find_first_not_of(" \t\r\n:;,)]}|/");
    if (first == std::string_view::npos || !hasLetters(text)) {
        literal(text);
        return;
    }
    const auto last = text.find_last_not_of(" \t\r\n");
    literal(text.substr(0, first));
    segments_.emplace_back(text.substr(first, last - first + 1));
    shapes_.push_back(std::move(shape));
    pieces_.emplace_back(text.substr(last + 1));
}

SegmentedDocument SegmentWriter::finish() {
    SegmentedDocument doc;
    doc.segments = segments_;
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
