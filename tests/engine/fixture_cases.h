#pragma once
// Reads tests/fixtures/safetensors-bad/cases.json: the expected outcome of every safetensors fixture.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace dragoman::test {

struct ExpectedTensor {
    std::string name, dtype, sha256, rawHex;
    std::vector<std::int64_t> shape;
    std::uint64_t begin = 0, end = 0;
    nlohmann::json values;  // numbers, booleans, or "nan"/"inf"/"-inf"
};

struct SafetensorsCase {
    std::string file, expect, category, note;
    std::vector<ExpectedTensor> tensors;
};

std::string fixturesDir();
std::vector<SafetensorsCase> safetensorsCases();

}  // namespace dragoman::test
