// What an HTTP client sends to dragoman-cli serve, as the protocol handlers parse it: an OpenAI chat
// completions body, and a LibreTranslate /translate and /detect body as JSON and as a form. Each is read or refused
// with ApiError (HTTP 400 and the field's name); no other exception escapes. The body is also given to the language
// detector (what /detect and source "auto" run on any text, invalid UTF-8 included).
#include "fuzz_support.h"
#include "server/api_error.h"
#include "server/libretranslate_protocol.h"
#include "server/openai_protocol.h"
#include "server/stop_strings.h"
#include "text/language_detection.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    const std::string body(reinterpret_cast<const char*>(data), size);
    try {
        const auto call = server::parseChatCall(body);
        // Its stop strings cut a stream of the body's own bytes the same wherever the deltas split.
        if (!call.stop.empty()) {
            server::StopStrings whole(call.stop), split(call.stop);
            const auto all = whole.push(body) + whole.finish();
            std::string pieces;
            for (std::size_t i = 0; i < body.size(); i += 3)
                pieces += split.push(std::string_view(body).substr(i, 3));
            pieces += split.finish();
            FUZZ_CHECK(all == pieces);
        }
    } catch (const server::ApiError& e) {
        FUZZ_CHECK(e.status >= 400 && e.status < 500);
    }
    for (const char* type : {"application/json", "application/x-www-form-urlencoded"}) {
        try {
            const auto call = server::parseLibreCall(body, type);
            FUZZ_CHECK(call.list || call.texts.size() == 1);
        } catch (const server::ApiError& e) {
            FUZZ_CHECK(e.status >= 400 && e.status < 500);
        }
        try {
            server::parseLibreDetect(body, type);
        } catch (const server::ApiError& e) {
            FUZZ_CHECK(e.status >= 400 && e.status < 500);
        }
    }
    if (const auto found = detectLanguage(body)) FUZZ_CHECK(!found->code.empty());
    return 0;
}
