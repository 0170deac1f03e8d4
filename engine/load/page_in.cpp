#include "load/page_in.h"

#include "util/log.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <algorithm>
#include <fstream>
#include <string>

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22
#endif

namespace dragoman {
namespace {

// Chunks small enough that a cold disk finishes one in well under 100 ms (cancel latency), big enough
// that the syscalls cost nothing.
constexpr std::uint64_t kChunk = 16ull << 20;
// Smaller files are a few thousand page-table entries: nothing to gain from reading them again in 2 MiB folios.
constexpr std::uint64_t kWorthRecaching = 64ull << 20;

std::uint64_t pageSize() {
    return static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
}

// The fraction of the range's pages that are in the page cache.
double residentFraction(const std::byte* base, std::uint64_t length) {
    if (length == 0) return 1.0;
    std::vector<unsigned char> pages((length + pageSize() - 1) / pageSize());
    if (::mincore(const_cast<std::byte*>(base), length, pages.data()) != 0) return 0.0;
    return double(std::count_if(pages.begin(), pages.end(), [](unsigned char c) { return c & 1; })) / double(pages.size());
}

// Maps the chunk's pages into our page table. MADV_POPULATE_READ does it in one call; older kernels get a
// read of one byte per page.
void populate(const std::byte* base, std::uint64_t length) {
    if (::madvise(const_cast<std::byte*>(base), length, MADV_POPULATE_READ) == 0) return;
    volatile std::uint8_t sink = 0;
    for (std::uint64_t offset = 0; offset < length; offset += pageSize())
        sink = sink + static_cast<std::uint8_t>(base[offset]);
}

// Drops [offset, offset + length) of the file's clean cached pages (length 0: to the end); false if not possible.
bool dropFromPageCache(const std::filesystem::path& path, std::uint64_t offset, std::uint64_t length) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    ::fdatasync(fd);
    const bool ok = ::posix_fadvise(fd, static_cast<off_t>(offset), static_cast<off_t>(length), POSIX_FADV_DONTNEED) == 0;
    ::close(fd);
    return ok;
}

// Whether the file's cached pages should be read again so that they come in 2 MiB folios: its first chunk, just
// populated, is mapped mostly with 4 KiB entries. That happens when the file was written here (a download, a copy,
// `quantize`): written pages stay cached in small folios, and mappings of them cannot use 2 MiB entries. Then every
// new process pays a page-table entry per 4 KiB on first touch (0.5 s for the 3.6 GB HY-MT 1.8B on a 2-core VM,
// against 0.02 s for 2 MiB entries), and decoding pays TLB misses for as long as the file stays cached.
bool cachedInSmallFolios(const MappedFile& file, std::uint64_t probed) {
    if (file.size() < kWorthRecaching) return false;
    return file.hugePageBytes() < probed / 2;
}

// Drops [offset, offset + length) of the file from the page cache (our own entries first: the cache keeps what is
// mapped) so that populating the mapping reads it again, in 2 MiB folios where the filesystem has them. Clean pages
// only; pages another process maps stay.
void dropCachedPages(const MappedFile& file, std::uint64_t offset, std::uint64_t length) {
    ::madvise(const_cast<std::byte*>(file.data() + offset), length, MADV_DONTNEED);
    dropFromPageCache(file.path(), offset, length);
}

// The first chunk again from the disk: if it now comes in 2 MiB folios, the rest of the file is dropped too and
// populating reads it the same way (once, for as long as the page cache keeps the file). A filesystem without large
// folios costs one chunk's read per load and changes nothing.
void recacheInHugeFolios(const MappedFile& file, std::uint64_t firstChunk) {
    dropCachedPages(file, 0, firstChunk);
    populate(file.data(), firstChunk);
    if (file.hugePageBytes() < firstChunk / 2) return;
    log::logger().info("{} was cached in 4 KiB pages; reading it again into 2 MiB pages", file.path().string());
    dropCachedPages(file, firstChunk, file.size() - firstChunk);
}

// After the whole file is populated with its first chunk in 2 MiB folios (so the filesystem has them), the rest
// should be too. Where under 90 % is, parts of it were cached by read() (a hash, a copy, another program's
// conversion: readahead makes folios of its window's size, too small for 2 MiB entries): the caller drops the rest
// and populates it again, once per page-cache lifetime. Pages another process maps stay where they are: a file that
// another running process keeps mapped in small folios costs a second populate, not a read.
bool restCachedInSmallFolios(const MappedFile& file) {
    constexpr std::uint64_t kHuge = 2ull << 20;
    return file.size() >= kWorthRecaching && file.hugePageBytes() < file.size() / kHuge * kHuge / 10 * 9;
}

// Reads [offset, offset + length) with plain sequential read(), exactly as `cat` does: on a cold disk this
// streams at full speed, where page faults on the mapping read in small synchronous steps.
bool readRange(int fd, std::uint64_t offset, std::uint64_t length, std::vector<std::byte>& buffer) {
    while (length > 0) {
        const ssize_t n = ::pread(fd, buffer.data(), std::min<std::uint64_t>(length, buffer.size()), static_cast<off_t>(offset));
        if (n <= 0) return false;
        offset += static_cast<std::uint64_t>(n);
        length -= static_cast<std::uint64_t>(n);
    }
    return true;
}

}  // namespace

bool pageIn(const std::vector<std::shared_ptr<const MappedFile>>& files, ProgressMeter& meter, std::size_t phase) {
    // Each pass over a file reports bytes. Where faults read huge folios, one pass populates the mapping,
    // reading what is not cached. Elsewhere a file not (almost) all cached is first read with sequential
    // read(), which on a cold disk streams at full speed where 4 KiB faults read in small synchronous steps;
    // checking residency chunk by chunk between reads was measured to halve that throughput.
    const bool populateOnly = pageInReadsHugeFolios();
    std::vector<bool> needsRead;
    std::uint64_t total = 0;
    for (const auto& file : files) {
        needsRead.push_back(!populateOnly && residentFraction(file->data(), file->size()) < 0.99);
        total += file->size() * (needsRead.back() ? 2 : 1);
    }
    std::vector<std::byte> buffer(std::find(needsRead.begin(), needsRead.end(), true) != needsRead.end() ? 8ull << 20 : 0);
    std::uint64_t done = 0;
    if (!meter.keepGoing(phase, 0, total)) return false;
    for (std::size_t i = 0; i < files.size(); ++i) {
        const auto& file = *files[i];
        if (needsRead[i]) {
            const int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC);
            if (fd >= 0) ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
            for (std::uint64_t offset = 0; offset < file.size(); offset += kChunk) {
                const std::uint64_t length = std::min(kChunk, file.size() - offset);
                if (fd >= 0) readRange(fd, offset, length, buffer);  // on failure the populate faults pages in itself
                done += length;
                if (!meter.keepGoing(phase, done, total)) {
                    if (fd >= 0) ::close(fd);
                    return false;
                }
            }
            if (fd >= 0) ::close(fd);
        }
        bool firstChunkHuge = false;
        for (std::uint64_t offset = 0; offset < file.size(); offset += kChunk) {
            const std::uint64_t length = std::min(kChunk, file.size() - offset);
            populate(file.data() + offset, length);
            if (offset == 0 && populateOnly) {
                firstChunkHuge = !cachedInSmallFolios(file, length);
                if (!firstChunkHuge) recacheInHugeFolios(file, length);
            }
            done += length;
            if (!meter.keepGoing(phase, done, total)) return false;
        }
        if (firstChunkHuge && restCachedInSmallFolios(file)) {
            log::logger().info("{} was partly cached in small pages; reading that part again into 2 MiB pages", file.path().string());
            dropCachedPages(file, kChunk, file.size() - kChunk);
            for (std::uint64_t offset = kChunk; offset < file.size(); offset += kChunk) {
                populate(file.data() + offset, std::min(kChunk, file.size() - offset));
                if (!meter.keepGoing(phase, done, total)) return false;  // the bar stays full; a cancel still stops it
            }
        }
    }
    return true;
}

// Whether faults on our mappings (MappedFile asks for MADV_HUGEPAGE) read a cold file in 2 MiB folios:
// transparent huge pages must be "always" or "madvise". Then populating the mapping is the whole page-in,
// and the fastest one measured: 1.3-1.5 s for the 3.6 GB HY-MT 1.8B file against 3.5-3.7 s for sequential
// read() (2 cores, virtio disk, read_ahead_kb 128 or 8192 alike), with every aligned 2 MiB of the file in
// one folio, which decoding needs to stream at full speed (see MappedFile::open).
bool pageInReadsHugeFolios() {
    static const bool yes = [] {
        std::ifstream setting("/sys/kernel/mm/transparent_hugepage/enabled");
        std::string line;
        std::getline(setting, line);
        return line.find("[always]") != std::string::npos || line.find("[madvise]") != std::string::npos;
    }();
    return yes;
}

bool evictFromPageCache(const std::filesystem::path& path) {
    return dropFromPageCache(path, 0, 0);
}

}  // namespace dragoman
