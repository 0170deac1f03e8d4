#pragma once
// Which model card's prompts a HunYuan translation model is spoken to with. Hy-MT2 keeps HY-MT1.5's
// architecture, tokenizer and chat format but changed its templates and added instruction modes, so the
// profile follows the model's identity: the Hugging Face repo id where the store knows it (a hub-cache entry,
// or a folder inside a hub cache), an import's recorded id, then config.json's `_name_or_path`, then the
// folder name. The first of these that names a family decides; none: HY-MT1.5.
#include "runtime/hymt_prompt.h"
#include "runtime/translation_request.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace dragoman {

struct ModelEntry;

enum class PromptProfile { HyMt15, HyMt2 };

std::string_view promptProfileName(PromptProfile profile);  // "hy-mt1.5", "hy-mt2"
// Throws Error("input") naming the profiles for anything else.
PromptProfile parsePromptProfile(std::string_view name);
// The family a name spells ("tencent/Hy-MT2-1.8B-FP8" -> HyMt2, "HY-MT1.5-7B" or "Hunyuan-MT-7B" -> HyMt15),
// nullopt when it names neither.
std::optional<PromptProfile> profileNamedBy(std::string_view name);

struct DetectedProfile {
    PromptProfile profile = PromptProfile::HyMt15;
    std::string identity;  // the name that decided, or "" for the default
};
DetectedProfile detectPromptProfile(const ModelEntry& entry, const nlohmann::json& config);

// The user message `profile`'s templates give `request`.
std::string userMessage(PromptProfile profile, const PromptRequest& request);
// The user message for one segment of a translation request (its glossary, context and instructions).
std::string userMessage(PromptProfile profile, const TranslationRequest& request, const std::string& segment);

}  // namespace dragoman
