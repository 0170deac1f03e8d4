#include "server/client_watch.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <iterator>

#include <netdb.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

namespace dragoman::server {
namespace {

// A socket address as httplib writes it: numeric host (getnameinfo) and port.
bool sameAddress(const sockaddr_storage& address, socklen_t length, const std::string& host, int port) {
    char name[NI_MAXHOST], service[NI_MAXSERV];
    if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, name, sizeof(name), service, sizeof(service),
                      NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return false;
    int number = -1;
    const std::string_view text(service);
    std::from_chars(text.data(), text.data() + text.size(), number);
    return number == port && host == name;
}

}  // namespace

int connectedSocket(const std::string& localAddr, int localPort, const std::string& remoteAddr, int remotePort) {
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
        int fd = -1;
        const auto name = entry.path().filename().string();
        if (std::from_chars(name.data(), name.data() + name.size(), fd).ec != std::errc()) continue;
        struct stat status {};
        if (::fstat(fd, &status) != 0 || !S_ISSOCK(status.st_mode)) continue;
        sockaddr_storage peer{}, local{};
        socklen_t peerLength = sizeof(peer), localLength = sizeof(local);
        if (::getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peerLength) != 0) continue;
        if (::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &localLength) != 0) continue;
        if (sameAddress(peer, peerLength, remoteAddr, remotePort) && sameAddress(local, localLength, localAddr, localPort)) return fd;
    }
    return -1;
}

struct ClientWatch::Entry {
    int socket = -1;
    CancelToken token;
    std::atomic<bool> gone{false};
};

ClientWatch::Watched::~Watched() {
    watch_.unwatch(entry_.get());
}

bool ClientWatch::Watched::gone() const {
    return entry_->gone.load();
}

ClientWatch::ClientWatch() : wake_(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
    if (wake_ >= 0) thread_ = std::thread([this] { run(); });
}

ClientWatch::~ClientWatch() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake();
    if (thread_.joinable()) thread_.join();
    if (wake_ >= 0) ::close(wake_);
}

std::shared_ptr<ClientWatch::Watched> ClientWatch::watch(int socket, CancelToken token) {
    auto entry = std::make_shared<Entry>();
    entry->socket = socket;
    entry->token = std::move(token);
    {
        std::lock_guard lock(mutex_);
        if (cancelledAll_) entry->token.cancel();
        entries_.push_back(entry);  // a socket of -1 too: cancelAll() reaches it
    }
    wake();
    return std::make_shared<Watched>(*this, std::move(entry));
}

void ClientWatch::cancelAll() {
    std::lock_guard lock(mutex_);
    cancelledAll_ = true;
    for (const auto& entry : entries_)
        entry->token.cancel();
}

void ClientWatch::unwatch(const Entry* entry) {
    {
        std::lock_guard lock(mutex_);
        std::erase_if(entries_, [entry](const auto& e) { return e.get() == entry; });
    }
    // Before httplib closes the socket: the poll must not go on with a number the next connection may get.
    wake();
}

void ClientWatch::wake() const {
    if (wake_ < 0) return;
    const std::uint64_t one = 1;
    [[maybe_unused]] const auto written = ::write(wake_, &one, sizeof(one));
}

void ClientWatch::run() {
    for (;;) {
        std::vector<std::shared_ptr<Entry>> polled;
        {
            std::lock_guard lock(mutex_);
            if (stopping_) return;
            std::copy_if(entries_.begin(), entries_.end(), std::back_inserter(polled), [](const auto& e) { return e->socket >= 0; });
        }
        std::vector<pollfd> fds{{wake_, POLLIN, 0}};
        // Only the peer's end wakes the poll: a client's next request, already sent, leaves the socket readable.
        for (const auto& entry : polled)
            fds.push_back({entry->socket, POLLRDHUP, 0});
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR) continue;
            return;
        }
        if (fds[0].revents & POLLIN) {
            std::uint64_t count = 0;
            [[maybe_unused]] const auto read = ::read(wake_, &count, sizeof(count));
        }
        std::lock_guard lock(mutex_);
        for (std::size_t i = 0; i < polled.size(); ++i) {
            if (!(fds[i + 1].revents & (POLLRDHUP | POLLHUP | POLLERR))) continue;
            // Still watched: the socket is still this connection's (httplib closes it only after the handle goes).
            const auto it = std::find(entries_.begin(), entries_.end(), polled[i]);
            if (it == entries_.end()) continue;
            polled[i]->gone = true;
            polled[i]->token.cancel();
            entries_.erase(it);
        }
    }
}

}  // namespace dragoman::server
