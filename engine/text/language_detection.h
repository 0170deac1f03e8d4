#pragma once
// Which language a text is written in, for "from: detect": Google's Compact Language Detector 2 (Debian's
// libcld2) on the words, and where it cannot tell (a greeting, a name) the writing system's majority, when that
// script is written by one language of ours more than any other (Hangul, kana, Thai, Hebrew, ...).
#include <optional>
#include <string>
#include <string_view>

namespace dragoman {

struct DetectedLanguage {
    std::string code;       // ours (languages.h: "zh-Hant", "he", "tl"), or the detector's for a language outside it ("sv")
    bool reliable = false;  // the detector was sure; false: a guess from a few words or from the script alone
};

// nullopt: nothing to go by (empty text, digits, Latin letters too few to tell). Invalid UTF-8, control characters
// and noncharacters are read as spaces; past 64 KiB the text is not looked at.
std::optional<DetectedLanguage> detectLanguage(std::string_view text);

}  // namespace dragoman
