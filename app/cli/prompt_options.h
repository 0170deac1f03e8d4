#pragma once
// The options that shape a prompted model's prompt, shared by translate, translate-file and prompt:
// --glossary, --context, and Hy-MT2's --style, --preference (repeatable), --keep-delimiters, with
// --prompt-profile to choose the templates by hand.
#include "cli/command_line.h"
#include "dragoman.h"

namespace dragoman::cli {

void addPromptOptions(CommandLine& cmd);

struct PromptOptions {
    std::vector<std::pair<std::string, std::string>> glossary;
    std::string context, style, profile;
    std::vector<std::string> preferences;
    bool keepDelimiters = false;

    void applyTo(TranslationRequest& request) const;
};

// Reads the glossary file; throws UsageError for an unknown profile or an empty style or preference, Error
// for an unreadable or malformed glossary.
PromptOptions readPromptOptions(const CommandLine& cmd);

}  // namespace dragoman::cli
