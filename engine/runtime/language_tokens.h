#pragma once
// Maps Dragoman's language codes (HY-MT's: zh, de, zh-Hant, ...) to the target-language tokens that
// multilingual OPUS-MT models put in front of the source (">>deu<<", ">>cmn_Hans<<", ...).
#include <optional>
#include <string>
#include <vector>

namespace dragoman {

// The first of the model's own language tokens that stands for `code`, or nullopt.
std::optional<std::string> languageTokenFor(const std::string& code, const std::vector<std::string>& modelTokens);

// The codes of ours that the model's language tokens cover.
std::vector<std::string> languagesCovered(const std::vector<std::string>& modelTokens);

}  // namespace dragoman
