#include "text/sentence_splitter.h"

#include "util/error.h"

#include <unicode/brkiter.h>
#include <unicode/unistr.h>

#include <memory>

namespace dragoman {
namespace {

std::string trim(const std::string& s) {
    const auto first = s.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    return s.substr(first, s.find_last_not_of(" \t\r\n") - first + 1);
}

}  // namespace

std::vector<std::string> splitSentences(std::string_view paragraph, const std::string& locale) {
    const auto text = icu::UnicodeString::fromUTF8(icu::StringPiece(paragraph.data(), static_cast<int32_t>(paragraph.size())));
    UErrorCode status = U_ZERO_ERROR;
    std::unique_ptr<icu::BreakIterator> it(icu::BreakIterator::createSentenceInstance(icu::Locale(locale.c_str()), status));
    if (U_FAILURE(status)) throw Error("text", std::string("ICU sentence iterator unavailable: ") + u_errorName(status));
    it->setText(text);
    std::vector<std::string> sentences;
    for (int32_t start = it->first(), end = it->next(); end != icu::BreakIterator::DONE; start = end, end = it->next()) {
        std::string piece;
        text.tempSubStringBetween(start, end).toUTF8String(piece);
        piece = trim(piece);
        if (!piece.empty()) sentences.push_back(std::move(piece));
    }
    return sentences;
}

}  // namespace dragoman
