#pragma once
// dragoman-cli serve: the local engine behind HTTP (cpp-httplib, Debian's libcpp-httplib: a thread per
// connection and chunked responses, which is what token streaming needs, without an event loop of our own).
// It speaks OpenAI's chat completions and models list, and LibreTranslate's /translate and /languages. One
// base model stays loaded; its adapters are chosen per request by name. Requests run concurrently, up to
// ServerConfig::maxRunning at a time (the engine's kernels interleave them); more wait in a bounded line,
// and beyond it a request is answered 503 at once.
#include "dragoman.h"

#include <map>
#include <memory>
#include <string>

namespace dragoman::server {

struct ServerConfig {
    std::string host = "127.0.0.1";
    int port = 8080;     // 0: any free port
    std::string apiKey;  // empty: none asked for
    int maxRunning = 4;
    int maxWaiting = 16;
    std::size_t maxBodyBytes = 4u << 20;  // judged from Content-Length, and as a body without one arrives
    // On stop(), how long requests in flight may go on before they are cancelled (answered 503, or a stream ended
    // with an error event): a translation of a 4 MiB body would otherwise hold a stopping server for an hour.
    double stopGraceSeconds = 30;
};

class ApiServer {
public:
    ApiServer(ServerConfig config, std::shared_ptr<const Model> model, std::map<std::string, std::shared_ptr<const LoraSet>> adapters);
    ~ApiServer();

    // Binds the socket; returns the port. Throws Error("io") when the address cannot be bound.
    int bind();
    // Serves until stop(); requests in flight are answered to the end before it returns.
    void run();
    // From any thread (a signal handler's thread): new requests are turned away (503), those in flight get
    // stopGraceSeconds to finish and are cancelled after it (or at once with `now`), then run() returns.
    void stop(bool now = false);

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace dragoman::server
