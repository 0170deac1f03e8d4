#pragma once
// OpenAI's chat completions on the wire: the request's fields as the engine takes them, and the answer
// (whole, or as SSE chunks) as OpenAI's clients read it.
#include "dragoman.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace dragoman::server {

struct ChatCall {
    std::string model;
    std::vector<ChatMessage> messages;
    bool stream = false, includeUsage = false;
    std::optional<std::int64_t> maxTokens;
    std::optional<double> temperature, topP;
    std::optional<std::uint64_t> seed;
    // Dragoman's extension: sample as the model's generation config says (what `translate --sample` does locally),
    // where the request names no temperature.
    bool sample = false;
    std::vector<std::string> stop;
    std::string sourceLang, targetLang;  // for a model without a chat format (Marian)
    // Dragoman's translation extension (with target_lang): what shapes a prompted model's prompt, as
    // TranslationRequest carries it: glossary ([[source, target], ...]), context, style, preferences,
    // keep_delimiters, structured_format, prompt_profile.
    std::vector<std::pair<std::string, std::string>> glossary;
    std::string context, style, structuredFormat, promptProfile;
    std::vector<std::string> preferences;
    bool keepDelimiters = false;
};

// Throws ApiError(400) naming the field that is missing or of the wrong type.
ChatCall parseChatCall(const std::string& body);

struct Usage {
    std::int64_t prompt = 0, completion = 0;
};

class ChatAnswer {
public:
    ChatAnswer(std::string id, std::string model);
    // The whole answer (stream: false).
    std::string whole(const std::string& text, const std::string& finishReason, const Usage& usage) const;
    // SSE events: the first chunk (the assistant's role), each delta, the last (finish reason), usage, [DONE].
    std::string roleEvent() const;
    std::string deltaEvent(const std::string& text) const;
    std::string finishEvent(const std::string& finishReason) const;
    std::string usageEvent(const Usage& usage) const;
    static std::string doneEvent() { return "data: [DONE]\n\n"; }
    static std::string errorEvent(const std::string& message);

private:
    nlohmann::json chunk(nlohmann::json choices) const;

    std::string id_, model_;
    std::int64_t created_;
};

// GET /v1/models: the base and each adapter by name. Each entry adds "chat" (a Dragoman extension): false for a
// translation model, which answers the last user message translated between source_lang and target_lang.
std::string modelList(const std::string& base, const std::vector<std::string>& adapters, bool chat, const std::string& promptProfile);

}  // namespace dragoman::server
