#pragma once
// A translation request and what it reports back.
#include "util/cancel.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dragoman {

class LoraSet;  // a LoRA adapter bound to a model (layers/lora.h); opaque here

// One turn of a conversation (OpenAI's chat messages): role "system", "user" or "assistant".
struct ChatMessage {
    std::string role, content;
};

struct TranslationRequest {
    std::string text;
    std::string from, to;  // Dragoman language codes
    std::int64_t beams = 1;
    std::uint64_t requestId = 0;
    // Receives each final piece of the output; return false to stop (the output so far is returned).
    std::function<bool(std::string_view delta)> onDelta;
    // Prompted models (HY-MT) only: sampling with the model's recommended settings, terminology,
    // preceding context, and text carrying <sn></sn> format tags.
    bool sample = false;
    std::uint64_t seed = 0;
    std::vector<std::pair<std::string, std::string>> glossary{};
    std::string context{};
    bool formatted = false;
    // Hy-MT2's instruction modes (the hy-mt2 prompt profile; refused by models whose prompts lack them): a
    // translation style ("formal", "legal"), preferences (the numbered translation tasks), keeping the source's
    // delimiters, and structured data of a named format ("JSON", "YAML") translated whole, keys and nesting kept.
    std::string style{};
    std::vector<std::string> preferences{};
    bool keepDelimiters = false;
    std::string structuredFormat{};
    // "hy-mt1.5" or "hy-mt2": the prompt templates to use in place of those the model's identity selects.
    std::string promptProfile{};
    // Stops the translation between decoding steps and inside a long prompt; the output so far is returned.
    CancelToken cancel{};
    // The LoRA adapter this request runs with (Model::loadAdapter), or none: the base model alone.
    std::shared_ptr<const LoraSet> adapter{};
    // A chat completion instead of a translation (chat models, ModelDescription::chat): the conversation is
    // rendered in the model's own chat format, as a chat server would, and the model's answer is generated;
    // `text`, `from` and `to` are not used.
    std::vector<ChatMessage> messages{};
    // Caps on what is generated, and sampling settings that replace the model's recommended ones
    // (temperature 0: greedy). Unset: the model's own settings.
    std::optional<std::int64_t> maxNewTokens{};
    std::optional<double> temperature{}, topP{};
};

struct TranslationStats {
    std::int64_t sourceTokens = 0, generatedTokens = 0;
    double firstTokenSeconds = -1, totalSeconds = 0;
    bool stopped = false;
    // A sequence ran into a length cap (the request's maxNewTokens, the model's own maximum) before its end-of-sequence
    // token: the translation is cut short (OpenAI's finish_reason "length").
    bool truncated = false;
};

}  // namespace dragoman
