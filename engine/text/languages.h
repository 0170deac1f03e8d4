#pragma once
// The languages Dragoman knows, from resources/languages.json (compiled in, so the engine needs no files).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace dragoman {

struct Language {
    std::string code;     // as in CLI.md: "zh", "zh-Hant", "yue", ...
    std::string english;  // the name the English prompts use
    std::string chinese;  // the name the Chinese prompts use
};

const std::vector<Language>& allLanguages();
std::optional<Language> findLanguage(std::string_view code);
// Chinese in any script or variety (zh, zh-Hant, yue): HY-MT's prompts are written in Chinese for these.
bool isChinese(std::string_view code);
// A code's language without its script or region ("zh-Hant" -> "zh"): what a model's language is judged by.
std::string primaryLanguage(const std::string& code);

}  // namespace dragoman
