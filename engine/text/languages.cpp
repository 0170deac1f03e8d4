#include "text/languages.h"

#include "text/languages_data.h"

#include <nlohmann/json.hpp>

namespace dragoman {

const std::vector<Language>& allLanguages() {
    static const std::vector<Language> table = [] {
        std::vector<Language> rows;
        const auto json = nlohmann::json::parse(kLanguagesJson);
        for (const auto& row : json.at("languages"))
            rows.push_back({row.at("code").get<std::string>(), row.at("english").get<std::string>(), row.at("chinese").get<std::string>()});
        return rows;
    }();
    return table;
}

std::optional<Language> findLanguage(std::string_view code) {
    for (const auto& language : allLanguages())
        if (language.code == code) return language;
    return std::nullopt;
}

bool isChinese(std::string_view code) {
    return code == "zh" || code == "zh-Hant" || code == "yue";
}

std::string primaryLanguage(const std::string& code) {
    return code.substr(0, code.find('-'));
}

}  // namespace dragoman
