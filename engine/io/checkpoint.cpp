#include "io/checkpoint.h"

#include "util/error.h"
#include "util/regular_file.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <set>

namespace dragoman {
namespace {

constexpr const char* kIndexName = "model.safetensors.index.json";
constexpr const char* kSingleName = "model.safetensors";

std::map<std::string, std::string> readIndex(const std::filesystem::path& indexPath) {
    requireRegularFile(indexPath);
    std::ifstream in(indexPath);
    if (!in) throw Error("io", indexPath.string() + ": cannot open");
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw Error("checkpoint", indexPath.string() + ": not valid JSON: " + e.what());
    }
    if (!json.is_object() || !json.contains("weight_map") || !json["weight_map"].is_object())
        throw Error("checkpoint", indexPath.string() + ": no 'weight_map' object");
    std::map<std::string, std::string> map;
    for (const auto& [name, file] : json["weight_map"].items()) {
        if (!file.is_string()) throw Error("checkpoint", indexPath.string() + ": weight_map['" + name + "'] is not a file name");
        const std::string fileName = file.get<std::string>();
        if (fileName.find('/') != std::string::npos || fileName == ".." || fileName.empty())
            throw Error("checkpoint", indexPath.string() + ": weight_map names a file outside the folder: '" + fileName + "'");
        map.emplace(name, fileName);
    }
    // No shard to open would leave a model with no weights at all (found by fuzz_checkpoint_index).
    if (map.empty()) throw Error("checkpoint", indexPath.string() + ": weight_map lists no tensors");
    return map;
}

}  // namespace

std::vector<std::filesystem::path> checkpointFiles(const std::filesystem::path& dir) {
    const auto index = dir / kIndexName;
    if (std::filesystem::exists(index)) {
        std::set<std::string> names;
        for (const auto& [tensor, file] : readIndex(index))
            names.insert(file);
        std::vector<std::filesystem::path> files;
        for (const auto& name : names)
            files.push_back(dir / name);
        return files;
    }
    if (std::filesystem::exists(dir / kSingleName)) return {dir / kSingleName};
    throw Error("checkpoint", dir.string() + ": no " + kSingleName + " or " + kIndexName);
}

Checkpoint Checkpoint::open(const std::filesystem::path& dir) {
    Checkpoint checkpoint;
    for (const auto& path : checkpointFiles(dir)) {
        auto file = SafetensorsFile::open(path);
        for (const auto& info : file->tensors()) {
            auto [it, inserted] = checkpoint.tensors_.emplace(info.name, Entry{file, &info});
            if (!inserted)
                throw Error("checkpoint",
                            "tensor '" + info.name + "' appears in both " + it->second.file->path().string() + " and " + path.string());
        }
        checkpoint.files_.push_back(std::move(file));
    }
    const auto indexPath = dir / kIndexName;
    if (std::filesystem::exists(indexPath)) {
        const auto index = readIndex(indexPath);
        for (const auto& [name, fileName] : index) {
            const Entry* entry = checkpoint.find(name);
            if (!entry) throw Error("checkpoint", indexPath.string() + ": tensor '" + name + "' is not in " + fileName);
            if (entry->file->path().filename() != fileName)
                throw Error("checkpoint", indexPath.string() + ": tensor '" + name + "' is in " + entry->file->path().filename().string() +
                                              ", not " + fileName);
        }
        for (const auto& [name, entry] : checkpoint.tensors_)
            if (!index.count(name))
                throw Error("checkpoint", indexPath.string() + ": tensor '" + name + "' of " + entry.file->path().filename().string() +
                                              " is missing from the index");
    }
    return checkpoint;
}

const Checkpoint::Entry* Checkpoint::find(std::string_view name) const noexcept {
    auto it = tensors_.find(name);
    return it == tensors_.end() ? nullptr : &it->second;
}

std::uint64_t Checkpoint::totalBytes() const noexcept {
    std::uint64_t total = 0;
    for (const auto& file : files_)
        total += file->mapping()->size();
    return total;
}

}  // namespace dragoman
