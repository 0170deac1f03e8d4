// A server's streamed chat answer (server-sent events), as the remote engine reads it: cut into chunks at
// places the first byte chooses, the reader gives the same content and the same ending as when the whole
// stream arrives at once, and never throws.
#include "remote/chat_stream.h"
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    if (size == 0) return 0;
    const std::size_t step = 1 + data[0] % 17;
    const auto stream = fuzz::text(data + 1, size - 1);
    std::string deltas;
    ChatStreamReader whole, chunked;
    const bool wholeOk = whole.feed(stream, [&](const std::string& piece) {
        deltas += piece;
        return true;
    });
    bool chunkedOk = true;
    for (std::size_t i = 0; i < stream.size() && chunkedOk; i += step)
        chunkedOk = chunked.feed(stream.substr(i, step), {});
    FUZZ_CHECK(wholeOk == chunkedOk);
    FUZZ_CHECK(whole.text() == chunked.text() && whole.text() == deltas);
    FUZZ_CHECK(whole.done() == chunked.done());
    FUZZ_CHECK(whole.failure().empty() == wholeOk);
    return 0;
}
