#pragma once
// LibreTranslate's API on the wire: POST /translate ({"q": text or list, "source", "target", "format"}) and
// GET /languages, so its clients (browser extensions, i18n tools) can use Dragoman unchanged.
#include <string>
#include <vector>

namespace dragoman::server {

struct LibreCall {
    std::vector<std::string> texts;
    bool list = false;  // q was a list: so is translatedText
    std::string source, target;
    bool html = false;
    std::string apiKey;  // LibreTranslate clients send the key in the body
};

// JSON or form-encoded, as LibreTranslate accepts. Throws ApiError(400).
LibreCall parseLibreCall(const std::string& body, const std::string& contentType);
std::string libreAnswer(const std::vector<std::string>& translations, bool list, const std::string& detectedSource);

struct LibreLanguage {
    std::string code, name;
    std::vector<std::string> targets;
};
std::string libreLanguages(const std::vector<LibreLanguage>& languages);

}  // namespace dragoman::server
