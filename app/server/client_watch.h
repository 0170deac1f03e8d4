#pragma once
// Whether the client of a request in progress is still there. A request's sequence should leave the batch as soon
// as its client leaves, including one that does not stream (whose answer is written only at the end, so no failed
// write can tell) and one whose prompt is still being read. A thread polls the watched connections for the peer's
// end (POLLRDHUP, POLLHUP, POLLERR) and cancels the request's token at once.
//
// A client that shuts down only its sending side after the request counts as gone, as in uvicorn (what vLLM's
// server runs on): TCP cannot tell that from a closed connection until a write fails.
#include "dragoman.h"

#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace dragoman::server {

// The socket of this process connected from remoteAddr:remotePort to localAddr:localPort (numeric hosts, as
// getnameinfo writes them), or -1. httplib 0.11.4 gives a handler the connection's addresses, not its socket.
int connectedSocket(const std::string& localAddr, int localPort, const std::string& remoteAddr, int remotePort);

class ClientWatch {
public:
    ClientWatch();
    ~ClientWatch();
    ClientWatch(const ClientWatch&) = delete;
    ClientWatch& operator=(const ClientWatch&) = delete;

    struct Entry;
    // One watched connection, for as long as the handle lives.
    class Watched {
    public:
        Watched(ClientWatch& watch, std::shared_ptr<Entry> entry) : watch_(watch), entry_(std::move(entry)) {}
        ~Watched();
        Watched(const Watched&) = delete;
        Watched& operator=(const Watched&) = delete;
        // Whether the client has left (its token was cancelled for that, not by cancelAll()).
        bool gone() const;

    private:
        ClientWatch& watch_;
        std::shared_ptr<Entry> entry_;
    };
    // Watches `socket` while the returned handle lives: `token` is cancelled when the peer closes or resets the
    // connection, or by cancelAll() (before or after). A socket of -1 is never reported gone.
    std::shared_ptr<Watched> watch(int socket, CancelToken token);
    // Cancels every watched token, and every one watched from now on (a stopping server).
    void cancelAll();

private:
    void run();
    void unwatch(const Entry* entry);
    void wake() const;

    std::mutex mutex_;
    std::vector<std::shared_ptr<Entry>> entries_;
    bool cancelledAll_ = false;
    bool stopping_ = false;
    int wake_ = -1;  // an eventfd: the polling thread picks up a changed list
    std::thread thread_;
};

}  // namespace dragoman::server
