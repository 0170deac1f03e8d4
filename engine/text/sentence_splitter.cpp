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

// A sentence iterator for `locale`, made once per thread: ICU builds one from its rules on each
// createSentenceInstance (tens of microseconds, as long as splitting a short line), and an iterator is not shared
// between threads.
icu::BreakIterator& sentenceIterator(const std::string& locale) {
    thread_local std::string madeFor;
    thread_local std::unique_ptr<icu::BreakIterator> iterator;
    if (!iterator || madeFor != locale) {
        UErrorCode status = U_ZERO_ERROR;
        std::unique_ptr<icu::BreakIterator> made(icu::BreakIterator::createSentenceInstance(icu::Locale(locale.c_str()), status));
        if (U_FAILURE(status) || !made) throw Error("text", std::string("ICU sentence iterator unavailable: ") + u_errorName(status));
        iterator = std::move(made);
        madeFor = locale;
    }
    return *iterator;
}

}  // namespace

std::vector<std::string> splitSentences(std::string_view paragraph, const std::string& locale) {
    const auto text = icu::UnicodeString::fromUTF8(icu::StringPiece(paragraph.data(), static_cast<int32_t>(paragraph.size())));
    auto& it = sentenceIterator(locale);
    // The iterator keeps a reference to the text: it is pointed at a string that outlives it once this call is done.
    struct Release {
        icu::BreakIterator& it;
        ~Release() {
            static const icu::UnicodeString none;
            it.setText(none);
        }
    } release{it};
    it.setText(text);
    std::vector<std::string> sentences;
    for (int32_t start = it.first(), end = it.next(); end != icu::BreakIterator::DONE; start = end, end = it.next()) {
        std::string piece;
        text.tempSubStringBetween(start, end).toUTF8String(piece);
        piece = trim(piece);
        if (!piece.empty()) sentences.push_back(std::move(piece));
    }
    return sentences;
}

}  // namespace dragoman
