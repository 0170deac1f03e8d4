#pragma once
// Hy-MT2's prompt templates, from its model card ("Hy-MT2 Translation Task Instruction Examples"): the Chinese
// template with the languages' Chinese names when either side is Chinese (zh, zh-Hant, yue), else the English
// one with their English names. One instruction mode per request: default, terminology (glossary), background
// information (context), style, preferences (the numbered translation tasks), delimiters or structured data;
// formatted text keeps HY-MT1.5's template.
#include "runtime/hymt_prompt.h"

#include <string>

namespace dragoman {

// Throws Error("input") for a target language the model does not know, or for two modes in one request.
std::string hymt2UserMessage(const PromptRequest& request);

}  // namespace dragoman
