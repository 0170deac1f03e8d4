#pragma once
// The architecture registry: each config.json model_type names how its network is built, which tokenizer
// its folder carries and how it translates. Adding an architecture means adding its files and one entry
// in runtime/architectures.cpp; an unknown model_type is refused by name.
#include "io/checkpoint.h"
#include "runtime/runnable_model.h"

#include <nlohmann/json.hpp>

#include <string>

namespace dragoman {

struct BuildContext {
    const nlohmann::json& config;
    const Checkpoint& checkpoint;  // mapped, paged in: the network binds what it reads
    const std::string& modelId;
    std::string configLabel;  // the config.json path, for messages
    Placement placement;      // where the caller asked the model to run
    CopyCounter& copies;      // tensors the network copies instead of reading them as mapped
};

struct Architecture {
    const char* modelType;
    bool followsDevice;  // runs where OpenOptions::device says; otherwise on the CPU kernels
    Network (*build)(const BuildContext& context);
    // Whether `dir` holds this architecture's tokenizer files, and the tokenizer they make.
    bool (*hasTokenizer)(const std::filesystem::path& dir);
    std::unique_ptr<Tokenizer> (*tokenizer)(const std::filesystem::path& dir);
    std::unique_ptr<const TranslationStrategy> (*strategy)(const RunnableModel& model);
    // What the strategy will offer for the folder `dir`, read from its files alone (no weights): the model manager.
    LanguageOffer (*languages)(const std::filesystem::path& dir);
};

// Throws Error("config") naming the model_type and the supported ones.
const Architecture& architectureFor(const std::string& modelType, const std::string& label);

// The tokenizer of a model folder of `modelType`. Throws Error("config") or Error("tokenizer").
std::unique_ptr<Tokenizer> loadTokenizer(const std::filesystem::path& dir, const std::string& modelType);

// The architectures this build supports (registration order).
const std::vector<const Architecture*>& architectures();

}  // namespace dragoman
