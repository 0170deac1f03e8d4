#pragma once
// An error the server answers with: HTTP status and OpenAI's body {"error": {"message", "type", "code"}}.
#include <stdexcept>
#include <string>

namespace dragoman::server {

struct ApiError : std::runtime_error {
    ApiError(int status, std::string code, const std::string& message)
        : std::runtime_error(message), status(status), code(std::move(code)) {}
    int status;
    std::string code;  // "invalid_json", "model_not_found", ...
};

// The JSON body for an error (type follows the status as OpenAI's API names it).
std::string errorBody(int status, const std::string& code, const std::string& message);

}  // namespace dragoman::server
