#include "server/libretranslate_protocol.h"

#include "server/api_error.h"

#include <QByteArray>
#include <QUrlQuery>

#include <nlohmann/json.hpp>

namespace dragoman::server {
namespace {

using nlohmann::json;

std::string dumped(const json& j) {
    return j.dump(-1, ' ', false, json::error_handler_t::replace);
}

// The body as a JSON object, from JSON or a form.
json bodyObject(const std::string& body, const std::string& contentType) {
    json j;
    if (contentType.find("application/x-www-form-urlencoded") != std::string::npos) {
        const QUrlQuery form(QString::fromUtf8(QByteArray::fromStdString(body)).replace('+', ' '));
        j = json::object();
        for (const auto& [key, value] : form.queryItems(QUrl::FullyDecoded))
            j[key.toStdString()] = value.toStdString();
    } else {
        try {
            j = json::parse(body);
        } catch (const json::exception& e) {  // parse_error, and out_of_range for a number like 1e999
            throw ApiError(400, "invalid_json", std::string("the body is not valid JSON: ") + e.what());
        }
    }
    if (!j.is_object()) throw ApiError(400, "invalid_json", "the body must be a JSON object");
    return j;
}

// An optional string field ("" when absent or null).
std::string textField(const json& j, const char* field, bool required) {
    if (!j.contains(field) || j[field].is_null()) {
        if (required) throw ApiError(400, "invalid_request_error", std::string("'") + field + "' is required");
        return std::string();
    }
    if (!j[field].is_string()) throw ApiError(400, "invalid_request_error", std::string("'") + field + "' must be a string");
    return j[field].get<std::string>();
}

json detectionJson(const LibreDetection& d) {
    return {{"language", d.language}, {"confidence", d.confidence}};
}

}  // namespace

LibreCall parseLibreCall(const std::string& body, const std::string& contentType) {
    LibreCall call;
    const auto j = bodyObject(body, contentType);
    if (!j.contains("q")) throw ApiError(400, "invalid_request_error", "'q' is required (a text or a list of texts)");
    if (j["q"].is_string()) {
        call.texts.push_back(j["q"].get<std::string>());
    } else if (j["q"].is_array()) {
        call.list = true;
        for (const auto& q : j["q"]) {
            if (!q.is_string()) throw ApiError(400, "invalid_request_error", "'q' must hold texts only");
            call.texts.push_back(q.get<std::string>());
        }
    } else {
        throw ApiError(400, "invalid_request_error", "'q' must be a text or a list of texts");
    }
    auto text = [&](const char* field, bool required) { return textField(j, field, required); };
    call.source = text("source", false);
    if (call.source == "auto") call.source.clear();
    call.target = text("target", true);
    const auto format = text("format", false);
    if (!format.empty() && format != "text" && format != "html")
        throw ApiError(400, "invalid_request_error", "'format' must be text or html");
    call.html = format == "html";
    call.apiKey = text("api_key", false);
    return call;
}

std::string libreAnswer(const std::vector<std::string>& translations, bool list, const std::vector<LibreDetection>& detected) {
    json answer;
    if (list)
        answer["translatedText"] = translations;
    else
        answer["translatedText"] = translations.empty() ? std::string() : translations.front();
    if (!detected.empty()) {
        if (list) {
            answer["detectedLanguage"] = json::array();
            for (const auto& d : detected)
                answer["detectedLanguage"].push_back(detectionJson(d));
        } else {
            answer["detectedLanguage"] = detectionJson(detected.front());
        }
    }
    return dumped(answer);
}

LibreDetectCall parseLibreDetect(const std::string& body, const std::string& contentType) {
    const auto j = bodyObject(body, contentType);
    return {textField(j, "q", true), textField(j, "api_key", false)};
}

std::string libreDetectAnswer(const std::vector<LibreDetection>& candidates) {
    json list = json::array();
    for (const auto& d : candidates)
        list.push_back(detectionJson(d));
    return dumped(list);
}

std::string libreLanguages(const std::vector<LibreLanguage>& languages) {
    json list = json::array();
    for (const auto& l : languages)
        list.push_back({{"code", l.code}, {"name", l.name}, {"targets", l.targets}});
    return dumped(list);
}

}  // namespace dragoman::server
