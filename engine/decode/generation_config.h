#pragma once
// generation_config.json (falling back to config.json) as Hugging Face generate() reads it.
#include "text/tokenizer.h"

#include <filesystem>
#include <optional>
#include <vector>

namespace dragoman {

struct GenerationConfig {
    std::vector<TokenId> eosIds;
    std::optional<TokenId> decoderStartId, padId, bosId;
    std::optional<std::int64_t> maxLength;
    std::optional<TokenId> forcedEosId;
    std::vector<std::vector<TokenId>> badWordsIds;
    double repetitionPenalty = 1.0;
    std::int64_t noRepeatNgramSize = 0;
    std::int64_t numBeams = 1;
    double lengthPenalty = 1.0;
    bool earlyStopping = false;
    bool doSample = false;
    std::int64_t topK = 50;
    double topP = 1.0, temperature = 1.0;
    bool samplingGiven = false;  // the file sets top_k, top_p or temperature
    std::optional<std::int64_t> maxNewTokens;

    // Reads <dir>/generation_config.json, else the same fields of <dir>/config.json. Throws Error("config").
    static GenerationConfig load(const std::filesystem::path& dir);
};

}  // namespace dragoman
