#pragma once
// Writes a safetensors file: header first (padded to 8 bytes so every tensor is aligned), then each
// tensor's bytes in order, streamed from a fill callback so multi-GB files never sit in memory.
// The file appears atomically: it is written under a temporary name and renamed at the end.
#include "io/dtype.h"

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace dragoman {

class SafetensorsWriter {
public:
    // fill(buffer, offsetInTensor): write buffer.size() bytes of the tensor starting at that byte offset;
    // both are whole elements (multiples of the dtype size).
    using Fill = std::function<void(std::span<std::byte> buffer, std::uint64_t offset)>;

    void add(std::string name, DType dtype, std::vector<std::int64_t> shape, Fill fill);
    void addBytes(std::string name, DType dtype, std::vector<std::int64_t> shape, std::vector<std::byte> bytes);
    void setMetadata(std::string key, std::string value) { metadata_[std::move(key)] = std::move(value); }
    // Throws Error("io") on failure; never leaves a partial file at `path`.
    void write(const std::filesystem::path& path) const;

private:
    struct Pending {
        std::string name;
        DType dtype;
        std::vector<std::int64_t> shape;
        std::uint64_t nbytes;
        Fill fill;
    };
    std::vector<Pending> tensors_;
    std::map<std::string, std::string> metadata_;
};

}  // namespace dragoman
