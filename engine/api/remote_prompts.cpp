// dragoman.h's prompts for remote chat models: the same templates ChatPromptStrategy uses locally.
#include "dragoman.h"

#include "runtime/hymt_prompt.h"

namespace dragoman {

std::string chatTranslationMessage(const TranslationRequest& request, const std::string& line) {
    return hymtUserMessage({line, request.from, request.to, request.glossary, request.context, request.formatted});
}

std::string chatTranslationAnswer(const TranslationRequest& request, const std::string& answer) {
    return request.formatted ? stripTargetTags(answer) : answer;
}

}  // namespace dragoman
