#pragma once
// An OpenAI chat-completions answer streamed as server-sent events, read as the network hands it over: in
// chunks cut anywhere, lines ended by LF or CRLF, comments and event names skipped, "data: [DONE]" at the end.

#include <functional>
#include <string>
#include <string_view>

namespace dragoman {

class ChatStreamReader {
public:
    // Called with each piece of content in order; returning false stops the reading.
    using OnDelta = std::function<bool(const std::string& piece)>;

    // Reads what the chunk completes. False when the stream failed (see failure()) or onDelta asked to stop.
    bool feed(std::string_view chunk, const OnDelta& onDelta);

    bool done() const { return done_; }                // "[DONE]" was read
    const std::string& text() const { return text_; }  // the content so far
    // Why the stream failed, empty while it has not. errorEvent() holds the server's error event, if that was it.
    const std::string& failure() const { return failure_; }
    const std::string& errorEvent() const { return errorEvent_; }

private:
    bool readLine(std::string line, const OnDelta& onDelta);

    std::string buffer_, text_, failure_, errorEvent_;
    bool done_ = false;
};

}  // namespace dragoman
