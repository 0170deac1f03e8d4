#include "runtime/language_tokens.h"

#include "text/languages.h"
#include "text/marian_tokenizer.h"
#include "util/regular_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <map>

namespace dragoman {
namespace {

// ISO 639-3 (and script) spellings OPUS-MT uses, most specific first.
const std::map<std::string, std::vector<std::string>>& aliases() {
    static const std::map<std::string, std::vector<std::string>> table{
        {"zh", {"cmn_Hans", "zho_Hans", "zho", "cmn", "zh"}},
        {"zh-Hant", {"cmn_Hant", "zho_Hant", "zh_Hant"}},
        {"yue", {"yue_Hant", "yue_Hans", "yue"}},
        {"en", {"eng", "en"}},
        {"fr", {"fra", "fr"}},
        {"pt", {"por", "pt"}},
        {"es", {"spa", "es"}},
        {"ja", {"jpn", "ja"}},
        {"tr", {"tur", "tr"}},
        {"ru", {"rus", "ru"}},
        {"ar", {"ara", "arb", "ar"}},
        {"ko", {"kor", "ko"}},
        {"th", {"tha", "th"}},
        {"it", {"ita", "it"}},
        {"de", {"deu", "de"}},
        {"vi", {"vie", "vi"}},
        {"ms", {"zsm_Latn", "msa", "zlm_Latn", "ms"}},
        {"id", {"ind", "id"}},
        {"tl", {"tgl", "fil", "tl"}},
        {"hi", {"hin", "hi"}},
        {"pl", {"pol", "pl"}},
        {"cs", {"ces", "cs"}},
        {"nl", {"nld", "nl"}},
        {"km", {"khm", "km"}},
        {"my", {"mya", "my"}},
        {"fa", {"pes", "fas", "fa"}},
        {"gu", {"guj", "gu"}},
        {"ur", {"urd", "ur"}},
        {"te", {"tel", "te"}},
        {"mr", {"mar", "mr"}},
        {"he", {"heb", "he"}},
        {"bn", {"ben", "bn"}},
        {"ta", {"tam", "ta"}},
        {"uk", {"ukr", "uk"}},
        {"bo", {"bod", "bo"}},
        {"kk", {"kaz", "kk"}},
        {"mn", {"khk", "mon", "mn"}},
        {"ug", {"uig", "uig_Arab", "ug"}},
    };
    return table;
}

}  // namespace

std::optional<std::string> languageTokenFor(const std::string& code, const std::vector<std::string>& modelTokens) {
    auto it = aliases().find(code);
    if (it == aliases().end()) return std::nullopt;
    for (const auto& alias : it->second) {
        const auto token = ">>" + alias + "<<";
        if (std::find(modelTokens.begin(), modelTokens.end(), token) != modelTokens.end()) return token;
    }
    return std::nullopt;
}

std::vector<std::string> languagesCovered(const std::vector<std::string>& modelTokens) {
    std::vector<std::string> codes;
    for (const auto& language : allLanguages())
        if (languageTokenFor(language.code, modelTokens)) codes.push_back(language.code);
    return codes;
}

std::pair<std::string, std::string> readLanguagePair(const std::filesystem::path& dir) {
    requireRegularFile(dir / "tokenizer_config.json");
    std::ifstream in(dir / "tokenizer_config.json");
    if (!in) return {};
    try {
        const auto json = nlohmann::json::parse(in);
        return {json.value("source_lang", ""), json.value("target_lang", "")};
    } catch (const nlohmann::json::exception&) {
        return {};
    }
}

LanguageOffer languageTokenOffer(const std::filesystem::path& dir) {
    if (!std::filesystem::exists(dir / "source.spm")) return {};
    return {languagesCovered(MarianTokenizer::languageTokensIn(dir)), readLanguagePair(dir)};
}

}  // namespace dragoman
