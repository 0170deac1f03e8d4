#include "util/sha256.h"

#include "util/error.h"
#include "util/regular_file.h"

#include <openssl/evp.h>

#include <fcntl.h>
#include <unistd.h>
#include <cerrno>
#include <cstring>
#include <memory>
#include <vector>

namespace dragoman {
namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext newContext(const EVP_MD* md) {
    DigestContext ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
    if (!ctx || EVP_DigestInit_ex(ctx.get(), md, nullptr) != 1) throw Error("crypto", "cannot initialise digest");
    return ctx;
}

std::string finish(EVP_MD_CTX* ctx) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(ctx, digest, &length);
    static const char* hex = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < length; ++i) {
        out += hex[digest[i] >> 4];
        out += hex[digest[i] & 15];
    }
    return out;
}

// Streams the file through the digest with plain reads (no mapping: hashing must not pin the page cache).
void digestFile(EVP_MD_CTX* ctx, const std::filesystem::path& path, const std::function<bool(std::uint64_t)>& progress) {
    requireRegularFile(path);
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) throw Error("io", path.string() + ": cannot open: " + std::strerror(errno));
    std::unique_ptr<int, void (*)(int*)> closer(new int(fd), [](int* p) {
        ::close(*p);
        delete p;
    });
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    std::vector<char> buffer(4 << 20);
    std::uint64_t done = 0;
    for (;;) {
        const ssize_t n = ::read(fd, buffer.data(), buffer.size());
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error("io", path.string() + ": read failed: " + std::strerror(errno));
        }
        if (n == 0) break;
        EVP_DigestUpdate(ctx, buffer.data(), static_cast<std::size_t>(n));
        done += static_cast<std::uint64_t>(n);
        if (progress && !progress(done)) throw Cancelled("hashing " + path.string());
    }
}

}  // namespace

std::string sha256Hex(std::span<const std::byte> data) {
    auto ctx = newContext(EVP_sha256());
    EVP_DigestUpdate(ctx.get(), data.data(), data.size());
    return finish(ctx.get());
}

std::string sha256File(const std::filesystem::path& path, const std::function<bool(std::uint64_t)>& progress) {
    auto ctx = newContext(EVP_sha256());
    digestFile(ctx.get(), path, progress);
    return finish(ctx.get());
}

}  // namespace dragoman
