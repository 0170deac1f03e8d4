#include "remote/chat_stream.h"

#include <nlohmann/json.hpp>

namespace dragoman {

bool ChatStreamReader::feed(std::string_view chunk, const OnDelta& onDelta) {
    if (!failure_.empty()) return false;
    buffer_.append(chunk);
    std::size_t begin = 0;
    for (auto newline = buffer_.find('\n'); newline != std::string::npos; newline = buffer_.find('\n', begin)) {
        auto line = buffer_.substr(begin, newline - begin);
        begin = newline + 1;
        if (!readLine(std::move(line), onDelta)) {
            buffer_.erase(0, begin);
            return false;
        }
    }
    buffer_.erase(0, begin);
    return true;
}

bool ChatStreamReader::readLine(std::string line, const OnDelta& onDelta) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!line.starts_with("data:")) return true;  // comments, event names, blank separators
    const auto data = line.substr(line.size() > 5 && line[5] == ' ' ? 6 : 5);
    if (data == "[DONE]") {
        done_ = true;
        return true;
    }
    try {
        const auto event = nlohmann::json::parse(data);
        if (event.contains("error")) {
            errorEvent_ = data;
            failure_ = "the server stopped the answer";
            return false;
        }
        const auto& choices = event.at("choices");
        if (choices.empty()) return true;  // the usage event
        const auto& delta = choices.at(0).at("delta");
        if (delta.contains("content") && delta["content"].is_string()) {
            const auto piece = delta["content"].get<std::string>();
            text_ += piece;
            if (onDelta && !piece.empty() && !onDelta(piece)) return false;
        }
    } catch (const nlohmann::json::exception& x) {
        failure_ = std::string("malformed event: ") + x.what();
        return false;
    }
    return true;
}

}  // namespace dragoman
