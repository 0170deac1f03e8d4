#pragma once
// A strict safetensors reader over a memory mapping. Every length, offset and shape is validated against
// the file before any tensor byte is touched; a malformed file throws Error with one of the categories of
// tests/fixtures/safetensors-bad/cases.json (too_small, header_too_large, header_length, header_utf8,
// header_json, header_schema, duplicate_key, dtype, shape, size_mismatch, offsets) and names the file.
// Torch-free on purpose: the AddressSanitizer test builds it alone.
#include "io/dtype.h"
#include "io/mapped_file.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace dragoman {

struct TensorInfo {
    std::string name;
    DType dtype = DType::F32;
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0;  // relative to the data section
    std::uint64_t end = 0;
    std::uint64_t numel = 1;

    std::uint64_t nbytes() const noexcept { return end - begin; }
};

struct SafetensorsHeader {
    std::uint64_t headerLength = 0;  // JSON bytes after the 8-byte prefix
    std::uint64_t dataStart = 0;     // absolute offset of the data section
    std::uint64_t dataSize = 0;
    std::vector<TensorInfo> tensors;  // sorted by data offset
    std::map<std::string, std::string> metadata;
};

// The largest header accepted, as in the reference implementation.
inline constexpr std::uint64_t kMaxHeaderLength = 100'000'000;

// Parses and validates the header of a whole safetensors file held in `file`. Reads only the first
// 8 + headerLength bytes. `label` names the file in error messages.
SafetensorsHeader parseSafetensorsHeader(std::span<const std::byte> file, std::string_view label);

// What wrote a safetensors file, as its metadata's "dragoman" entry says ("logits", "synthetic"): "" for any file
// that is not one of ours (no such entry, another kind of file, nothing readable). A command that writes over its
// own earlier output checks this first, so a user's checkpoint is never written over.
std::string dragomanWriterOf(const std::filesystem::path& path);

class SafetensorsFile {
public:
    static std::shared_ptr<const SafetensorsFile> open(const std::filesystem::path& path);

    const std::filesystem::path& path() const noexcept { return mapping_->path(); }
    const SafetensorsHeader& header() const noexcept { return header_; }
    const std::vector<TensorInfo>& tensors() const noexcept { return header_.tensors; }
    const std::shared_ptr<const MappedFile>& mapping() const noexcept { return mapping_; }

    // nullptr when absent.
    const TensorInfo* find(std::string_view name) const noexcept;
    // The raw little-endian bytes of a tensor of this file (validated at open).
    std::span<const std::byte> bytes(const TensorInfo& tensor) const noexcept;

private:
    SafetensorsFile(std::shared_ptr<const MappedFile> mapping, SafetensorsHeader header);

    std::shared_ptr<const MappedFile> mapping_;
    SafetensorsHeader header_;
    std::map<std::string, std::size_t, std::less<>> byName_;
};

}  // namespace dragoman
