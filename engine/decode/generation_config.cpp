#include "decode/generation_config.h"

#include "util/error.h"
#include "util/json_file.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace dragoman {
GenerationConfig GenerationConfig::load(const std::filesystem::path& dir) {
    const auto model = readJsonObject(dir / "config.json", "config", true);
    const auto generation = readJsonObject(dir / "generation_config.json", "config", true);
    const bool hasGeneration = std::filesystem::exists(dir / "generation_config.json");
    const auto& source = hasGeneration ? generation : model;
    const auto label = (dir / (hasGeneration ? "generation_config.json" : "config.json")).string();
    GenerationConfig c;
    auto get = [&](const char* field) -> const nlohmann::json* {
        if (source.contains(field) && !source.at(field).is_null()) return &source.at(field);
        return nullptr;
    };
    auto integer = [&](const nlohmann::json& v, const char* field) { return jsonInteger(v, label + ": " + field, "config"); };
    try {
        if (auto v = get("eos_token_id")) c.eosIds = jsonIntegers(*v, label + ": eos_token_id", "config");
        if (auto v = get("decoder_start_token_id")) c.decoderStartId = integer(*v, "decoder_start_token_id");
        if (auto v = get("pad_token_id")) c.padId = integer(*v, "pad_token_id");
        if (auto v = get("bos_token_id")) c.bosId = integer(*v, "bos_token_id");
        if (auto v = get("max_length")) c.maxLength = integer(*v, "max_length");
        if (auto v = get("forced_eos_token_id")) c.forcedEosId = integer(v->is_array() ? v->at(0) : *v, "forced_eos_token_id");
        if (auto v = get("bad_words_ids")) {
            if (!v->is_array() || !std::all_of(v->begin(), v->end(), [](const nlohmann::json& words) { return words.is_array(); }))
                throw Error("config", label + ": bad_words_ids must be a list of lists of token ids");
            for (const auto& words : *v)
                c.badWordsIds.push_back(jsonIntegers(words, label + ": bad_words_ids", "config"));
        }
        if (auto v = get("repetition_penalty")) c.repetitionPenalty = v->get<double>();
        if (auto v = get("no_repeat_ngram_size")) c.noRepeatNgramSize = integer(*v, "no_repeat_ngram_size");
        if (auto v = get("num_beams")) c.numBeams = integer(*v, "num_beams");
        if (auto v = get("length_penalty")) c.lengthPenalty = v->get<double>();
        if (auto v = get("early_stopping")) c.earlyStopping = v->is_boolean() && v->get<bool>();
        if (auto v = get("do_sample")) c.doSample = v->get<bool>();
        if (auto v = get("top_k")) c.topK = integer(*v, "top_k");
        if (auto v = get("top_p")) c.topP = v->get<double>();
        if (auto v = get("temperature")) c.temperature = v->get<double>();
        c.samplingGiven = get("top_k") || get("top_p") || get("temperature");
        if (auto v = get("max_new_tokens")) c.maxNewTokens = integer(*v, "max_new_tokens");
    } catch (const nlohmann::json::exception& e) {
        throw Error("config", label + ": a generation field has the wrong type: " + e.what());
    }
    // Fields generation_config.json leaves out come from config.json, as transformers merges them.
    if (hasGeneration && c.eosIds.empty() && model.contains("eos_token_id") && model["eos_token_id"].is_number_integer())
        c.eosIds = {jsonInteger(model["eos_token_id"], (dir / "config.json").string() + ": eos_token_id", "config")};
    if (hasGeneration && !c.decoderStartId && model.contains("decoder_start_token_id") &&
        model["decoder_start_token_id"].is_number_integer())
        c.decoderStartId =
            jsonInteger(model["decoder_start_token_id"], (dir / "config.json").string() + ": decoder_start_token_id", "config");
    // What the decoders divide by, count with or index with: refused here by name rather than misbehaving later.
    auto refuse = [&](const std::string& what) { throw Error("config", label + ": " + what); };
    if (!std::isfinite(c.repetitionPenalty) || c.repetitionPenalty <= 0) refuse("repetition_penalty must be a positive number");
    if (c.numBeams < 1) refuse("num_beams must be at least 1 (it is " + std::to_string(c.numBeams) + ")");
    if (c.maxLength && *c.maxLength < 1) refuse("max_length must be at least 1");
    if (c.maxNewTokens && *c.maxNewTokens < 1) refuse("max_new_tokens must be at least 1");
    if (c.noRepeatNgramSize < 0) refuse("no_repeat_ngram_size cannot be negative");
    if (c.topK < 0) refuse("top_k cannot be negative");
    if (!(c.topP >= 0 && c.topP <= 1)) refuse("top_p must be between 0 and 1");
    if (!std::isfinite(c.temperature) || c.temperature < 0) refuse("temperature cannot be negative");
    if (!std::isfinite(c.lengthPenalty)) refuse("length_penalty must be a finite number");
    return c;
}

}  // namespace dragoman
