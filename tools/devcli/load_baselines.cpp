#include "devcli/load_baselines.h"

#include "io/safetensors.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <chrono>
#include <cstring>
#include <memory>

namespace dragoman::bench {
namespace {

using Clock = std::chrono::steady_clock;

// Runs `work` in a child process and returns what it measured.
template <typename Work>
BaselineResult inChild(Work work) {
    int fds[2];
    if (::pipe(fds) != 0) return {};
    const pid_t pid = ::fork();
    if (pid < 0) return {};
    if (pid == 0) {
        ::close(fds[0]);
        BaselineResult result;
        try {
            result = work();
        } catch (...) {
            result.seconds = -1;
        }
        result.peakRssBytes = peakRssBytes();
        [[maybe_unused]] auto written = ::write(fds[1], &result, sizeof result);
        ::_exit(0);
    }
    ::close(fds[1]);
    BaselineResult result;
    if (::read(fds[0], &result, sizeof result) != static_cast<ssize_t>(sizeof result)) result = {};
    ::close(fds[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return result;
}

std::uint64_t readWhole(const std::filesystem::path& path, char* into, std::size_t chunk) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw std::runtime_error("open");
    std::uint64_t total = 0;
    for (;;) {
        const ssize_t n = ::read(fd, into ? into + total : nullptr, chunk);
        if (n <= 0) break;
        total += static_cast<std::uint64_t>(n);
    }
    ::close(fd);
    return total;
}

}  // namespace

std::uint64_t peakRssBytes() {
    rusage usage{};
    ::getrusage(RUSAGE_SELF, &usage);
    return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

BaselineResult rawRead(const std::vector<std::filesystem::path>& files) {
    return inChild([&] {
        std::vector<char> buffer(8 << 20);
        const auto start = Clock::now();
        BaselineResult r;
        for (const auto& file : files) {
            const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
            if (fd < 0) throw std::runtime_error("open");
            ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
            for (ssize_t n; (n = ::read(fd, buffer.data(), buffer.size())) > 0;)
                r.bytes += static_cast<std::uint64_t>(n);
            ::close(fd);
        }
        r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return r;
    });
}

BaselineResult eagerCopyLoad(const std::vector<std::filesystem::path>& files) {
    return inChild([&] {
        const auto start = Clock::now();
        BaselineResult r;
        std::vector<std::unique_ptr<std::byte[]>> tensors;
        for (const auto& file : files) {
            const auto size = std::filesystem::file_size(file);
            std::unique_ptr<std::byte[]> whole(new std::byte[size]);
            readWhole(file, reinterpret_cast<char*>(whole.get()), 8 << 20);
            const auto header = parseSafetensorsHeader(std::span(whole.get(), size), file.string());
            for (const auto& t : header.tensors) {  // one owned copy per tensor, then the file buffer is freed
                std::unique_ptr<std::byte[]> copy(new std::byte[t.nbytes() + 1]);
                std::memcpy(copy.get(), whole.get() + header.dataStart + t.begin, t.nbytes());
                tensors.push_back(std::move(copy));
            }
            r.bytes += size;
        }
        r.seconds = std::chrono::duration<double>(Clock::now() - start).count();
        return r;
    });
}

}  // namespace dragoman::bench
