#include "server/openai_protocol.h"

#include "server/api_error.h"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace dragoman::server {
namespace {

using nlohmann::json;

ApiError badField(const std::string& field, const std::string& why) {
    return ApiError(400, "invalid_request_error", "'" + field + "' " + why);
}

// A message's content: a string, or OpenAI's list of parts of which the text parts count.
std::string contentOf(const json& content, std::size_t index) {
    if (content.is_string()) return content.get<std::string>();
    const std::string field = "messages[" + std::to_string(index) + "].content";
    if (!content.is_array()) throw badField(field, "must be a string or a list of text parts");
    std::string text;
    for (const auto& part : content) {
        if (!part.is_object() || !part.contains("type") || part["type"] != "text" || !part.contains("text") || !part["text"].is_string())
            throw badField(field, "may hold only parts {\"type\": \"text\", \"text\": ...}");
        text += part["text"].get<std::string>();
    }
    return text;
}

template <typename T>
std::optional<T> optionalNumber(const json& body, const char* field) {
    if (!body.contains(field) || body[field].is_null()) return std::nullopt;
    const auto& value = body[field];
    if (!value.is_number()) throw badField(field, "must be a number");
    if constexpr (std::is_integral_v<T>) {
        // JSON has one number type: 1e3 and 1000.0 are whole numbers too, 1e40 and 2^64 are not ones we take.
        if (value.is_number_unsigned() && value.template get<std::uint64_t>() > std::uint64_t(std::numeric_limits<T>::max()))
            throw badField(field, "is too large");
        if (value.is_number_float()) {
            const double d = value.template get<double>();
            if (!(d >= -9.2e18 && d <= 9.2e18) || d != std::floor(d)) throw badField(field, "must be a whole number");
            return static_cast<T>(d);
        }
    }
    return value.template get<T>();
}

std::string optionalText(const json& body, const char* field) {
    if (!body.contains(field) || body[field].is_null()) return {};
    if (!body[field].is_string()) throw badField(field, "must be a string");
    return body[field].get<std::string>();
}

}  // namespace

std::string errorBody(int status, const std::string& code, const std::string& message) {
    const char* type = status == 401   ? "authentication_error"
                       : status == 404 ? "not_found_error"
                       : status == 413 ? "request_too_large"
                       : status == 503 ? "server_overloaded"
                       : status >= 500 ? "server_error"
                                       : "invalid_request_error";
    return json{{"error", {{"message", message}, {"type", type}, {"code", code}}}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

ChatCall parseChatCall(const std::string& body) {
    json j;
    try {
        j = json::parse(body);
    } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
        throw ApiError(400, "invalid_json", std::string("the body is not valid JSON: ") + e.what());
    }
    if (!j.is_object()) throw ApiError(400, "invalid_json", "the body must be a JSON object");
    ChatCall call;
    if (!j.contains("model") || !j["model"].is_string()) throw badField("model", "is required (a string)");
    call.model = j["model"].get<std::string>();
    if (!j.contains("messages") || !j["messages"].is_array() || j["messages"].empty())
        throw badField("messages", "is required (a non-empty list)");
    for (std::size_t i = 0; i < j["messages"].size(); ++i) {
        const auto& m = j["messages"][i];
        if (!m.is_object() || !m.contains("role") || !m["role"].is_string() || !m.contains("content"))
            throw badField("messages[" + std::to_string(i) + "]", "must have a role and a content");
        call.messages.push_back({m["role"].get<std::string>(), contentOf(m["content"], i)});
    }
    if (j.contains("stream") && !j["stream"].is_null()) {
        if (!j["stream"].is_boolean()) throw badField("stream", "must be true or false");
        call.stream = j["stream"].get<bool>();
    }
    // include_usage null is unset, as OpenAI reads it; anything else but a boolean is refused by name.
    if (j.contains("stream_options") && j["stream_options"].is_object() && j["stream_options"].contains("include_usage")) {
        const auto& usage = j["stream_options"]["include_usage"];
        if (!usage.is_null() && !usage.is_boolean()) throw badField("stream_options.include_usage", "must be true or false");
        call.includeUsage = usage.is_boolean() && usage.get<bool>();
    }
    call.maxTokens = optionalNumber<std::int64_t>(j, "max_completion_tokens");
    if (!call.maxTokens) call.maxTokens = optionalNumber<std::int64_t>(j, "max_tokens");
    if (call.maxTokens && *call.maxTokens < 1) throw badField("max_tokens", "must be at least 1");
    call.temperature = optionalNumber<double>(j, "temperature");
    if (call.temperature && (*call.temperature < 0 || *call.temperature > 2)) throw badField("temperature", "must lie in [0, 2]");
    call.topP = optionalNumber<double>(j, "top_p");
    if (call.topP && (*call.topP <= 0 || *call.topP > 1)) throw badField("top_p", "must lie in (0, 1]");
    if (auto seed = optionalNumber<std::int64_t>(j, "seed")) call.seed = static_cast<std::uint64_t>(*seed);
    if (j.contains("sample") && !j["sample"].is_null()) {
        if (!j["sample"].is_boolean()) throw badField("sample", "must be true or false");
        call.sample = j["sample"].get<bool>();
    }
    // One answer per request, as text: asking for several, for token log-probabilities, for tools or for a response
    // format is refused by name rather than answered as if it had not been asked.
    if (auto n = optionalNumber<std::int64_t>(j, "n"); n && *n != 1) throw badField("n", "must be 1 (one answer per request)");
    if (j.contains("logprobs") && !j["logprobs"].is_null() && !(j["logprobs"].is_boolean() && !j["logprobs"].get<bool>()))
        throw badField("logprobs", "is not supported");
    if (j.contains("top_logprobs") && !j["top_logprobs"].is_null()) throw badField("top_logprobs", "is not supported");
    if (j.contains("tools") && !j["tools"].is_null() && !(j["tools"].is_array() && j["tools"].empty()))
        throw badField("tools", "is not supported");
    if (j.contains("response_format") && !j["response_format"].is_null()) {
        const auto& format = j["response_format"];
        if (!format.is_object() || format.value("type", std::string()) != "text")
            throw badField("response_format", "only {\"type\": \"text\"} is supported");
    }
    if (j.contains("stop") && !j["stop"].is_null()) {
        if (j["stop"].is_string()) {
            call.stop.push_back(j["stop"].get<std::string>());
        } else if (j["stop"].is_array()) {
            for (const auto& s : j["stop"]) {
                if (!s.is_string()) throw badField("stop", "must be a string or a list of strings");
                call.stop.push_back(s.get<std::string>());
            }
        } else {
            throw badField("stop", "must be a string or a list of strings");
        }
    }
    call.sourceLang = optionalText(j, "source_lang");
    call.targetLang = optionalText(j, "target_lang");
    if (j.contains("glossary") && !j["glossary"].is_null()) {
        if (!j["glossary"].is_array()) throw badField("glossary", "must be a list of [source, target] pairs");
        for (const auto& pair : j["glossary"]) {
            if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string() || !pair[1].is_string())
                throw badField("glossary", "must be a list of [source, target] pairs");
            call.glossary.emplace_back(pair[0].get<std::string>(), pair[1].get<std::string>());
        }
    }
    call.context = optionalText(j, "context");
    call.style = optionalText(j, "style");
    call.structuredFormat = optionalText(j, "structured_format");
    call.promptProfile = optionalText(j, "prompt_profile");
    if (j.contains("preferences") && !j["preferences"].is_null()) {
        if (!j["preferences"].is_array()) throw badField("preferences", "must be a list of strings");
        for (const auto& p : j["preferences"]) {
            if (!p.is_string()) throw badField("preferences", "must be a list of strings");
            call.preferences.push_back(p.get<std::string>());
        }
    }
    if (j.contains("keep_delimiters") && !j["keep_delimiters"].is_null()) {
        if (!j["keep_delimiters"].is_boolean()) throw badField("keep_delimiters", "must be true or false");
        call.keepDelimiters = j["keep_delimiters"].get<bool>();
    }
    return call;
}

ChatAnswer::ChatAnswer(std::string id, std::string model)
    : id_(std::move(id)),
      model_(std::move(model)),
      created_(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count()) {}

json ChatAnswer::chunk(json choices) const {
    return {{"id", id_}, {"object", "chat.completion.chunk"}, {"created", created_}, {"model", model_}, {"choices", std::move(choices)}};
}

std::string ChatAnswer::whole(const std::string& text, const std::string& finishReason, const Usage& usage) const {
    const json answer{
        {"id", id_},
        {"object", "chat.completion"},
        {"created", created_},
        {"model", model_},
        {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", text}}}, {"finish_reason", finishReason}}}},
        {"usage",
         {{"prompt_tokens", usage.prompt}, {"completion_tokens", usage.completion}, {"total_tokens", usage.prompt + usage.completion}}}};
    return answer.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string ChatAnswer::roleEvent() const {
    return "data: " +
           chunk({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}}, {"finish_reason", nullptr}}})
               .dump(-1, ' ', false, json::error_handler_t::replace) +
           "\n\n";
}

std::string ChatAnswer::deltaEvent(const std::string& text) const {
    return "data: " +
           chunk({{{"index", 0}, {"delta", {{"content", text}}}, {"finish_reason", nullptr}}})
               .dump(-1, ' ', false, json::error_handler_t::replace) +
           "\n\n";
}

std::string ChatAnswer::finishEvent(const std::string& finishReason) const {
    return "data: " +
           chunk({{{"index", 0}, {"delta", json::object()}, {"finish_reason", finishReason}}})
               .dump(-1, ' ', false, json::error_handler_t::replace) +
           "\n\n";
}

std::string ChatAnswer::usageEvent(const Usage& usage) const {
    auto event = chunk(json::array());
    event["usage"] = {
        {"prompt_tokens", usage.prompt}, {"completion_tokens", usage.completion}, {"total_tokens", usage.prompt + usage.completion}};
    return "data: " + event.dump(-1, ' ', false, json::error_handler_t::replace) + "\n\n";
}

std::string ChatAnswer::errorEvent(const std::string& message) {
    return "data: " + json::parse(errorBody(500, "generation_failed", message)).dump(-1, ' ', false, json::error_handler_t::replace) +
           "\n\n";
}

std::string modelList(const std::string& base, const std::vector<std::string>& adapters, bool chat, const std::string& promptProfile) {
    json data = json::array();
    data.push_back({{"id", base}, {"object", "model"}, {"created", 0}, {"owned_by", "dragoman"}, {"chat", chat}});
    for (const auto& name : adapters)
        data.push_back({{"id", name}, {"object", "model"}, {"created", 0}, {"owned_by", "dragoman"}, {"parent", base}, {"chat", chat}});
    // A request with target_lang may carry glossary, context, style, preferences, keep_delimiters,
    // structured_format and prompt_profile: clients send them only where the server says so.
    for (auto& entry : data)
        entry["translation_options"] = true;
    // Which model card's prompts the model is spoken to with, for clients that build them (RemoteEngine).
    if (!promptProfile.empty())
        for (auto& entry : data)
            entry["prompt_profile"] = promptProfile;
    return json{{"object", "list"}, {"data", data}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace dragoman::server
