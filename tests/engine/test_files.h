#pragma once
// File helpers shared by the engine tests.
#include "io/dtype.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace dragoman::test {

std::filesystem::path fixture(const char* name);
// Eight short English sentences of different lengths, for tests that need several sources.
const std::vector<std::string>& sampleSentences();
// Copies a fixture folder's files and makes them writable (the shared fixtures are read-only).
void copyFolder(const std::filesystem::path& from, const std::filesystem::path& to);

// A checkpoint's tensors as stored, to change and write back (broken checkpoints, other dtypes).
struct StoredTensor {
    DType dtype;
    std::vector<std::int64_t> shape;
    std::vector<std::byte> bytes;
};
using StoredTensors = std::map<std::string, StoredTensor>;
StoredTensors readTensors(const std::filesystem::path& dir);
void writeTensors(const StoredTensors& tensors, const std::filesystem::path& file);

}  // namespace dragoman::test
