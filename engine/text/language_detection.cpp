#include "text/language_detection.h"

#include <cld2/public/compact_lang_det.h>
#include <cld2/public/encodings.h>
#include <unicode/uscript.h>
#include <unicode/utf8.h>
#include <cstdio>  // compact_lang_det.h uses FILE without including it

#include <algorithm>
#include <array>
#include <map>

namespace dragoman {
namespace {

// More text does not change the answer; the detector's time grows with it.
constexpr std::size_t kMaxBytes = 64 * 1024;

std::string ourCode(const std::string& cld2) {
    // CLD2 keeps a few ISO 639 codes that were withdrawn or that we spell otherwise.
    static const std::map<std::string, std::string> renamed{{"iw", "he"}, {"fil", "tl"}, {"jw", "jv"}, {"in", "id"}};
    const auto it = renamed.find(cld2);
    return it == renamed.end() ? cld2 : it->second;
}

// The text as CLD2 takes it: interchange-valid UTF-8. Invalid bytes, control characters and noncharacters (where
// its checking entry point would stop reading) become spaces, so the words after them still count.
std::string interchangeText(std::string_view text) {
    std::string clean;
    clean.reserve(text.size());
    const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
    const auto length = static_cast<int32_t>(text.size());
    for (int32_t at = 0; at < length;) {
        const auto start = at;
        UChar32 c = 0;
        U8_NEXT(bytes, at, length, c);
        const bool control = (c >= 0 && c < 0x20 && c != '\t' && c != '\n' && c != '\r') || (c >= 0x7F && c <= 0x9F);
        const bool nonCharacter = (c >= 0xFDD0 && c <= 0xFDEF) || (c >= 0 && (c & 0xFFFE) == 0xFFFE);
        if (c < 0 || control || nonCharacter)
            clean += ' ';
        else
            clean.append(text.substr(static_cast<std::size_t>(start), static_cast<std::size_t>(at - start)));
    }
    return clean;
}

std::optional<DetectedLanguage> detectWords(std::string_view text) {
    const auto clean = interchangeText(text);
    CLD2::CLDHints hints{nullptr, nullptr, CLD2::UNKNOWN_ENCODING, CLD2::UNKNOWN_LANGUAGE};
    std::array<CLD2::Language, 3> top{};
    std::array<int, 3> percent{};
    std::array<double, 3> scores{};
    int textBytes = 0, validPrefix = 0;
    bool reliable = false;
    // The checking entry point still, in case CLD2 refuses something the cleaning let through: it then reads less.
    const auto language =
        CLD2::ExtDetectLanguageSummaryCheckUTF8(clean.data(), static_cast<int>(clean.size()), true, &hints, 0, top.data(), percent.data(),
                                                scores.data(), nullptr, &textBytes, &reliable, &validPrefix);
    if (language == CLD2::UNKNOWN_LANGUAGE || language == CLD2::TG_UNKNOWN_LANGUAGE) return std::nullopt;
    const std::string code = CLD2::LanguageCode(language);
    if (code.empty() || code == "un" || code == "xxx") return std::nullopt;
    return DetectedLanguage{ourCode(code), reliable};
}

// Letters that only some of the languages sharing a script use, to tell them apart when the detector cannot.
bool anyOf(const std::map<UChar32, int>& letters, std::initializer_list<UChar32> marks) {
    return std::any_of(marks.begin(), marks.end(), [&](UChar32 c) { return letters.count(c) > 0; });
}

std::string arabicScriptLanguage(const std::map<UChar32, int>& letters) {
    if (anyOf(letters, {0x06D0, 0x06C6, 0x06C7, 0x06C8, 0x06D5, 0x0626})) return "ug";  // ې ۆ ۇ ۈ ە ئ
    if (anyOf(letters, {0x0679, 0x0688, 0x0691, 0x06BA, 0x06D2, 0x06BE})) return "ur";  // ٹ ڈ ڑ ں ے ھ
    if (anyOf(letters, {0x067E, 0x0686, 0x0698, 0x06AF, 0x06CC, 0x06A9})) return "fa";  // پ چ ژ گ ی ک
    return "ar";
}

std::string cyrillicLanguage(const std::map<UChar32, int>& letters) {
    if (anyOf(letters, {0x04D9, 0x0493, 0x049B, 0x04A3, 0x04B1})) return "kk";  // ә ғ қ ң ұ
    if (anyOf(letters, {0x0457, 0x0454, 0x0491, 0x0456})) return "uk";          // ї є ґ і
    if (anyOf(letters, {0x04E9, 0x04AF})) return "mn";                          // ө ү
    return "ru";
}

std::optional<DetectedLanguage> detectScript(std::string_view text) {
    std::map<UScriptCode, int> scripts;
    std::map<UChar32, int> letters;
    int32_t at = 0;
    const auto* bytes = reinterpret_cast<const uint8_t*>(text.data());
    const auto length = static_cast<int32_t>(text.size());
    while (at < length) {
        UChar32 c = 0;
        U8_NEXT(bytes, at, length, c);
        if (c < 0) continue;
        UErrorCode status = U_ZERO_ERROR;
        const auto script = uscript_getScript(c, &status);
        if (U_FAILURE(status) || script == USCRIPT_COMMON || script == USCRIPT_INHERITED || script == USCRIPT_UNKNOWN) continue;
        ++scripts[script];
        ++letters[c];
    }
    if (scripts.empty()) return std::nullopt;
    // Japanese mixes kana into Han: any kana makes it Japanese.
    if (scripts.count(USCRIPT_HIRAGANA) || scripts.count(USCRIPT_KATAKANA)) return DetectedLanguage{"ja", false};
    const auto majority =
        std::max_element(scripts.begin(), scripts.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
    static const std::map<UScriptCode, std::string> onlyOne{
        {USCRIPT_HAN, "zh"},       {USCRIPT_HANGUL, "ko"},   {USCRIPT_THAI, "th"},    {USCRIPT_KHMER, "km"},      {USCRIPT_MYANMAR, "my"},
        {USCRIPT_TIBETAN, "bo"},   {USCRIPT_HEBREW, "he"},   {USCRIPT_GREEK, "el"},   {USCRIPT_DEVANAGARI, "hi"}, {USCRIPT_BENGALI, "bn"},
        {USCRIPT_GUJARATI, "gu"},  {USCRIPT_TAMIL, "ta"},    {USCRIPT_TELUGU, "te"},  {USCRIPT_GEORGIAN, "ka"},   {USCRIPT_ARMENIAN, "hy"},
        {USCRIPT_MONGOLIAN, "mn"}, {USCRIPT_LAO, "lo"},      {USCRIPT_SINHALA, "si"}, {USCRIPT_ETHIOPIC, "am"},   {USCRIPT_KANNADA, "kn"},
        {USCRIPT_MALAYALAM, "ml"}, {USCRIPT_GURMUKHI, "pa"}, {USCRIPT_ORIYA, "or"}};
    if (const auto it = onlyOne.find(majority); it != onlyOne.end()) return DetectedLanguage{it->second, false};
    if (majority == USCRIPT_ARABIC) return DetectedLanguage{arabicScriptLanguage(letters), false};
    if (majority == USCRIPT_CYRILLIC) return DetectedLanguage{cyrillicLanguage(letters), false};
    return std::nullopt;  // Latin and the rest: too many languages share them
}

}  // namespace

std::optional<DetectedLanguage> detectLanguage(std::string_view text) {
    if (text.size() > kMaxBytes) text = text.substr(0, kMaxBytes);  // a cut character ends the valid prefix
    if (auto words = detectWords(text)) return words;
    return detectScript(text);
}

}  // namespace dragoman
