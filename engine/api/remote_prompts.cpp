// dragoman.h's prompts for remote chat models: the same templates ChatPromptStrategy uses locally.
#include "dragoman.h"

#include "runtime/prompt_profile.h"

namespace dragoman {

std::string chatTranslationMessage(const TranslationRequest& request, const std::string& line) {
    return userMessage(request.promptProfile.empty() ? PromptProfile::HyMt15 : parsePromptProfile(request.promptProfile), request, line);
}

std::string promptProfileForName(std::string_view name) {
    return std::string(promptProfileName(profileNamedBy(name).value_or(PromptProfile::HyMt15)));
}

void checkPromptProfile(std::string_view profile) {
    parsePromptProfile(profile);
}

std::string chatTranslationAnswer(const TranslationRequest& request, const std::string& answer) {
    return request.formatted ? stripTargetTags(answer) : answer;
}

}  // namespace dragoman
