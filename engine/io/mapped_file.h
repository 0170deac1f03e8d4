#pragma once
// A read-only memory mapping of a whole file. Tensors point into it, so it lives as long as any of them
// (they hold a shared_ptr through their deleter).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>

namespace dragoman {

class MappedFile {
public:
    // Throws Error("io", ...) naming the file when it cannot be opened or mapped.
    static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);
    ~MappedFile();
    MappedFile(const MappedFile&) = delete;
    MappedFile& operator=(const MappedFile&) = delete;

    const std::filesystem::path& path() const noexcept { return path_; }
    std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
    const std::byte* data() const noexcept { return data_; }
    std::uint64_t size() const noexcept { return size_; }

    // Bytes of the mapping the kernel maps with 2 MiB page-table entries (FilePmdMapped in
    // /proc/self/smaps), 0 where that is not known. Reads the process's whole smaps (milliseconds): for
    // benchmarks and diagnostics, and once or twice per large file in the page-in (page_in.cpp).
    std::uint64_t hugePageBytes() const;

private:
    MappedFile(std::filesystem::path path, const std::byte* data, std::uint64_t size) : path_(std::move(path)), data_(data), size_(size) {}

    std::filesystem::path path_;
    const std::byte* data_ = nullptr;
    std::uint64_t size_ = 0;
};

}  // namespace dragoman
