#pragma once
// Maps Dragoman's language codes (HY-MT's: zh, de, zh-Hant, ...) to the target-language tokens that
// multilingual OPUS-MT models put in front of the source (">>deu<<", ">>cmn_Hans<<", ...).
#include "runtime/translation_strategy.h"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace dragoman {

// The first of the model's own language tokens that stands for `code`, or nullopt.
std::optional<std::string> languageTokenFor(const std::string& code, const std::vector<std::string>& modelTokens);

// The codes of ours that the model's language tokens cover.
std::vector<std::string> languagesCovered(const std::vector<std::string>& modelTokens);

// "en"/"de" from a bilingual model's tokenizer_config.json, or empty strings.
std::pair<std::string, std::string> readLanguagePair(const std::filesystem::path& dir);
// The languages of a Marian folder: its tokenizer's language tokens and its tokenizer_config.json's pair.
// Throws Error("tokenizer") for unreadable tokenizer files; none at all: nothing offered.
LanguageOffer languageTokenOffer(const std::filesystem::path& dir);

}  // namespace dragoman
