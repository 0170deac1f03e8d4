#pragma once
// Random-weight checkpoints with the exact shapes and config of real models, for speed tests:
// HunYuan (HY-MT1.5-1.8B, -7B, tiny) and Marian (opus-mt-en-de "base", tiny). Weights are small random
// values (deterministic from the seed) with unit norm weights, so the models run without overflowing.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dragoman {

struct SyntheticSpec {
    std::string arch;    // "hunyuan" | "marian"
    std::string preset;  // hy-mt1.5-1.8b | hy-mt1.5-7b | opus-mt-base | tiny
    std::string dtype;   // "bf16" | "f32"
    std::uint64_t seed = 0;
};

std::vector<std::string> syntheticPresets(const std::string& arch);

// Writes config.json, generation_config.json and model.safetensors (and a HunYuan checkpoint's tokenizer files) into
// `dir` (created if needed; an existing one may hold only those files, an earlier checkpoint). Throws Error("usage") for an unknown
// arch/preset/dtype, Error("io") for a folder with other files.
void writeSyntheticCheckpoint(const SyntheticSpec& spec, const std::filesystem::path& dir);

}  // namespace dragoman
