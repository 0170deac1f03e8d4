#include "runtime/prompt_profile.h"

#include "runtime/hymt2_prompt.h"
#include "store/model_store.h"
#include "util/error.h"

#include <regex>

namespace dragoman {

std::string_view promptProfileName(PromptProfile profile) {
    return profile == PromptProfile::HyMt2 ? "hy-mt2" : "hy-mt1.5";
}

PromptProfile parsePromptProfile(std::string_view name) {
    if (name == "hy-mt2") return PromptProfile::HyMt2;
    if (name == "hy-mt1.5") return PromptProfile::HyMt15;
    throw Error("input", "unknown prompt profile '" + std::string(name) + "' (hy-mt1.5 or hy-mt2)");
}

std::optional<PromptProfile> profileNamedBy(std::string_view name) {
    // Separators vary between uploads and conversions: Hy-MT2, hy_mt2, HYMT2-7B-GGUF; "hy-mt2" must not be the
    // start of another version number.
    static const std::regex hymt2(R"((hy|hunyuan)[-_ ]?mt[-_ ]?2(?![0-9]|\.[0-9]))", std::regex::icase);
    static const std::regex hymt15(R"(hy[-_ ]?mt[-_ ]?1[._]5|hunyuan[-_ ]?mt(?![-_ ]?2))", std::regex::icase);
    const std::string text(name);
    if (std::regex_search(text, hymt2)) return PromptProfile::HyMt2;
    if (std::regex_search(text, hymt15)) return PromptProfile::HyMt15;
    return std::nullopt;
}

DetectedProfile detectPromptProfile(const ModelEntry& entry, const nlohmann::json& config) {
    std::vector<std::string> names;
    // A folder inside a hub cache (models--ORG--NAME/snapshots/REV) names its repo, however it was opened.
    for (const auto& part : entry.dir) {
        auto component = part.string();
        if (component.rfind("models--", 0) != 0) continue;
        component = component.substr(8);
        if (auto at = component.find("--"); at != std::string::npos) component.replace(at, 2, "/");
        names.push_back(component);
    }
    if (entry.source == ModelSource::HubCache || entry.source == ModelSource::Imported) names.push_back(entry.id);
    if (config.is_object() && config.contains("_name_or_path") && config["_name_or_path"].is_string())
        names.push_back(config["_name_or_path"].get<std::string>());
    names.push_back(entry.dir.filename().string());
    names.push_back(entry.id);
    for (const auto& name : names)
        if (auto profile = profileNamedBy(name)) return {*profile, name};
    return {};
}

std::string userMessage(PromptProfile profile, const PromptRequest& request) {
    return profile == PromptProfile::HyMt2 ? hymt2UserMessage(request) : hymtUserMessage(request);
}

}  // namespace dragoman

namespace dragoman {

std::string userMessage(PromptProfile profile, const TranslationRequest& r, const std::string& segment) {
    PromptRequest prompt{segment, r.from, r.to, r.glossary, r.context, r.formatted};
    prompt.style = r.style;
    prompt.preferences = r.preferences;
    prompt.keepDelimiters = r.keepDelimiters;
    prompt.structuredFormat = r.structuredFormat;
    return userMessage(profile, prompt);
}

}  // namespace dragoman
