#include "load/page_in.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace dragoman {
namespace {

// Chunks small enough that a cold disk finishes one in well under 100 ms (cancel latency), big enough
// that the syscalls cost nothing.
constexpr std::uint64_t kChunk = 16ull << 20;
// How far ahead the kernel is asked to read while the current chunk is being populated.
constexpr std::uint64_t kReadAhead = 64ull << 20;

// Maps the chunk's pages into our page table. MADV_POPULATE_READ does it in one call; older kernels get a
// read of one byte per page.
void populate(const std::byte* base, std::uint64_t length) {
    if (::madvise(const_cast<std::byte*>(base), length, MADV_POPULATE_READ) == 0) return;
    const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    volatile std::uint8_t sink = 0;
    for (std::uint64_t offset = 0; offset < length; offset += page) sink = sink + static_cast<std::uint8_t>(base[offset]);
}

}  // namespace

bool pageIn(const std::vector<std::shared_ptr<const MappedFile>>& files, const PageInProgress& progress) {
    std::uint64_t total = 0;
    for (const auto& file : files) total += file->size();
    std::uint64_t done = 0;
    if (progress && !progress(0, total)) return false;
    for (const auto& file : files) {
        file->willNeed(0, kReadAhead);
        for (std::uint64_t offset = 0; offset < file->size(); offset += kChunk) {
            const std::uint64_t length = std::min(kChunk, file->size() - offset);
            file->willNeed(offset + kReadAhead, kChunk);  // keep the disk busy ahead of us
            populate(file->data() + offset, length);
            done += length;
            if (progress && !progress(done, total)) return false;
        }
    }
    return true;
}

bool evictFromPageCache(const std::filesystem::path& path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ::fdatasync(fd);
    const bool ok = ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) == 0;
    ::close(fd);
    return ok;
}

}  // namespace dragoman
