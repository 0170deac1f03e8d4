#pragma once
// Splits text into sentences with ICU's sentence break iterator, so that long paragraphs fit a model's
// positions and are translated sentence by sentence.
#include <string>
#include <string_view>
#include <vector>

namespace dragoman {

// Sentences of one paragraph (no newlines expected), each trimmed; whitespace-only input gives none.
// `locale` is an ICU locale id ("en", "zh", ...) for language-specific rules.
std::vector<std::string> splitSentences(std::string_view paragraph, const std::string& locale = "en");

}  // namespace dragoman
