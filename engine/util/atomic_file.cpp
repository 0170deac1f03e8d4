#include "util/atomic_file.h"

#include "util/error.h"

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <string>

namespace dragoman {
namespace {

std::string why(int error) {
    return error == ENOSPC || error == EDQUOT ? "the disk is full" : std::strerror(error);
}

// Makes the rename itself durable; a filesystem that cannot sync a folder loses nothing but that guarantee.
void syncFolder(const std::filesystem::path& dir) {
    const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    ::fsync(fd);
    ::close(fd);
}

}  // namespace

void writeFileAtomically(const std::filesystem::path& path, std::string_view bytes) {
    const auto temporary = path.parent_path() / ("." + path.filename().string() + ".tmp" + std::to_string(::getpid()));
    const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) throw Error("io", "cannot write " + path.string() + ": " + why(errno));
    auto fail = [&](int error) {
        ::close(fd);
        ::unlink(temporary.c_str());
        throw Error("io", "cannot write " + path.string() + ": " + why(error));
    };
    for (std::size_t done = 0; done < bytes.size();) {
        const auto n = ::write(fd, bytes.data() + done, bytes.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(n < 0 ? errno : ENOSPC);
        done += static_cast<std::size_t>(n);
    }
    if (::fsync(fd) != 0) fail(errno);
    if (::close(fd) != 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        throw Error("io", "cannot write " + path.string() + ": " + why(error));
    }
    if (::rename(temporary.c_str(), path.c_str()) != 0) {
        const int error = errno;
        ::unlink(temporary.c_str());
        throw Error("io", "cannot write " + path.string() + ": " + why(error));
    }
    syncFolder(path.parent_path());
}

}  // namespace dragoman
