#pragma once
// LibreTranslate's API on the wire: POST /translate ({"q": text or list, "source" (a code or "auto"), "target",
// "format"}), POST /detect and GET /languages, so its clients (browser extensions, i18n tools) can use Dragoman
// unchanged.
#include <string>
#include <vector>

namespace dragoman::server {

struct LibreCall {
    std::vector<std::string> texts;
    bool list = false;           // q was a list: so is translatedText
    std::string source, target;  // source empty: "auto", detected per text
    bool html = false;
    std::string apiKey;  // LibreTranslate clients send the key in the body
};

// JSON or form-encoded, as LibreTranslate accepts. Throws ApiError(400).
LibreCall parseLibreCall(const std::string& body, const std::string& contentType);
// What the source was taken to be: LibreTranslate's {"language", "confidence" (0-100)}.
struct LibreDetection {
    std::string language;
    double confidence = 0;
};
// `detected`: one per text for a source given as "auto" (a list answers a list), else empty.
std::string libreAnswer(const std::vector<std::string>& translations, bool list, const std::vector<LibreDetection>& detected);

// POST /detect's body ({"q": text}, JSON or form-encoded): the text. Throws ApiError(400).
struct LibreDetectCall {
    std::string text;
    std::string apiKey;
};
LibreDetectCall parseLibreDetect(const std::string& body, const std::string& contentType);
// Its answer: the candidates, best first (none: an empty list).
std::string libreDetectAnswer(const std::vector<LibreDetection>& candidates);

struct LibreLanguage {
    std::string code, name;
    std::vector<std::string> targets;
};
std::string libreLanguages(const std::vector<LibreLanguage>& languages);

}  // namespace dragoman::server
