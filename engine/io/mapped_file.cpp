#include "io/mapped_file.h"

#include "util/error.h"
#include "util/regular_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

namespace dragoman {
namespace {

[[noreturn]] void throwErrno(const std::filesystem::path& path, const char* what) {
    throw Error("io", path.string() + ": " + what + ": " + std::strerror(errno));
}

struct FdCloser {
    int fd;
    ~FdCloser() {
        if (fd >= 0) ::close(fd);
    }
};

}  // namespace

std::shared_ptr<const MappedFile> MappedFile::open(const std::filesystem::path& path) {
    requireRegularFile(path);  // before open(): a named pipe would block it
    FdCloser fd{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (fd.fd < 0) throwErrno(path, "cannot open");
    struct stat st {};
    if (::fstat(fd.fd, &st) != 0) throwErrno(path, "cannot stat");
    if (!S_ISREG(st.st_mode)) throw Error("io", path.string() + ": not a regular file");
    const auto size = static_cast<std::uint64_t>(st.st_size);
    if (size == 0) return std::shared_ptr<const MappedFile>(new MappedFile(path, nullptr, 0));
    // MAP_PRIVATE + PROT_READ: the pages are the page cache's own; nothing is copied and nothing can be written.
    void* data = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd.fd, 0);
    if (data == MAP_FAILED) throwErrno(path, "cannot map");
    // Lets the kernel map page-cache folios of 2 MiB with one page-table entry each, and read missing parts
    // in 2 MiB folios, also where transparent huge pages are "madvise" only. Decoding streams every weight
    // once per token: with 4 KiB entries the TLB misses cost up to a fifth of the decode speed (measured on
    // the opus-mt-base shapes, 2 cores: 54-57 vs 70 tokens/s). Advisory: an old kernel ignores it.
    ::madvise(data, size, MADV_HUGEPAGE);
    return std::shared_ptr<const MappedFile>(new MappedFile(path, static_cast<const std::byte*>(data), size));
}

MappedFile::~MappedFile() {
    if (data_) ::munmap(const_cast<std::byte*>(data_), size_);
}

std::uint64_t MappedFile::hugePageBytes() const {
    if (!data_) return 0;
    std::ifstream smaps("/proc/self/smaps");
    const auto start = reinterpret_cast<std::uintptr_t>(data_);
    std::string line;
    bool inside = false;
    while (std::getline(smaps, line)) {
        // A mapping's block starts with "begin-end perms ...": hex addresses, unlike the "Key: value" lines.
        const auto dash = line.find('-');
        if (dash != std::string::npos && dash < line.find(':')) {
            if (inside) return 0;  // our block ended without the field
            inside = std::strtoull(line.c_str(), nullptr, 16) == start;
        } else if (inside && line.rfind("FilePmdMapped:", 0) == 0) {
            return std::strtoull(line.c_str() + 14, nullptr, 10) * 1024;  // "FilePmdMapped:   6144 kB"
        }
    }
    return 0;
}

}  // namespace dragoman
