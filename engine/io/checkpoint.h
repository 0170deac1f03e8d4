#pragma once
// The weight files of one model folder: a single model.safetensors, or the shards named by
// model.safetensors.index.json. Tensor names are unique across shards; the index must agree with the files.
#include "io/safetensors.h"

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dragoman {

// The weight files a folder uses, in load order, without opening them (for hashing and stat checks).
std::vector<std::filesystem::path> checkpointFiles(const std::filesystem::path& dir);

// Tensors that could not be used as mapped and were copied (misaligned, or in a type the kernels do not read).
struct CopyCounter {
    std::atomic<std::uint64_t> tensors{0};
    std::atomic<std::uint64_t> bytes{0};
};

class Checkpoint {
public:
    // Maps and validates every weight file. Throws Error naming the file and the problem.
    static Checkpoint open(const std::filesystem::path& dir);

    struct Entry {
        std::shared_ptr<const SafetensorsFile> file;
        const TensorInfo* info = nullptr;
    };

    const std::vector<std::shared_ptr<const SafetensorsFile>>& files() const noexcept { return files_; }
    const std::map<std::string, Entry, std::less<>>& tensors() const noexcept { return tensors_; }
    const Entry* find(std::string_view name) const noexcept;
    std::uint64_t totalBytes() const noexcept;

private:
    std::vector<std::shared_ptr<const SafetensorsFile>> files_;
    std::map<std::string, Entry, std::less<>> tensors_;
};

}  // namespace dragoman
