#include "synthetic/synthetic_tokenizer.h"

#include "util/error.h"
#include "util/json_file.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

namespace dragoman {
namespace {

std::uint64_t splitMix(std::uint64_t& state) {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// GPT-2's printable stand-in of each byte, as UTF-8.
std::vector<std::string> byteSymbols() {
    std::vector<std::string> symbols(256);
    auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
    int next = 0x100;
    for (int b = 0; b < 256; ++b) {
        const int c = printable(b) ? b : next++;
        std::string s;
        if (c < 0x80)
            s += static_cast<char>(c);
        else
            s += {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
        symbols[static_cast<std::size_t>(b)] = s;
    }
    return symbols;
}

std::map<std::int64_t, std::string> specialNames(const SyntheticTokenizerSpec& s) {
    std::map<std::int64_t, std::string> names;
    if (s.legacyNames) {
        names[s.bos] = "<|startoftext|>";
        names[s.eos] = "<|eos|>";
        names[s.pad] = "<|pad|>";
        int extra = 0;
        for (auto id = s.firstSpecial; id < s.vocabSize; ++id)
            if (!names.count(id)) names[id] = "<|extra_" + std::to_string(extra++) + "|>";
        return names;
    }
    names[s.bos] = "<｜hy_begin▁of▁sentence｜>";
    names[s.pad] = "<｜hy_▁pad▁｜>";
    names[s.eos] = "<｜hy_place▁holder▁no▁2｜>";
    // The user and assistant markers sit 6 and 7 after BOS in HY-MT1.5-1.8B; elsewhere on the first free ids.
    auto freeId = [&](std::int64_t from) {
        for (auto id = from; id < s.vocabSize; ++id)
            if (!names.count(id)) return id;
        for (auto id = s.firstSpecial; id < s.vocabSize; ++id)
            if (!names.count(id)) return id;
        throw Error("usage", "synthetic tokenizer: no room for the chat tokens");
    };
    names[freeId(s.bos + 6)] = "<｜hy_User｜>";
    names[freeId(s.bos + 7)] = "<｜hy_Assistant｜>";
    int placeholder = 100;
    for (auto id = s.firstSpecial; id < s.vocabSize; ++id)
        if (!names.count(id)) names[id] = "<｜hy_place▁holder▁no▁" + std::to_string(placeholder++) + "｜>";
    return names;
}

}  // namespace

void writeSyntheticTokenizer(const SyntheticTokenizerSpec& spec, const std::filesystem::path& dir) {
    if (spec.firstSpecial < 256 || spec.firstSpecial > spec.vocabSize) throw Error("usage", "synthetic tokenizer: bad vocabulary layout");
    std::vector<std::string> tokens = byteSymbols();
    std::unordered_set<std::string> known(tokens.begin(), tokens.end());
    std::vector<std::pair<std::size_t, std::size_t>> merges;
    std::uint64_t state = spec.seed * 7919 + 17;
    // Merge pairs of existing tokens, the left side drawn from all and the right from the first 4096 (short
    // ones), so strings stay word-sized, as in a trained vocabulary.
    while (static_cast<std::int64_t>(tokens.size()) < spec.firstSpecial) {
        const auto a = splitMix(state) % tokens.size(), b = splitMix(state) % std::min<std::size_t>(tokens.size(), 4096);
        auto joined = tokens[a] + tokens[b];
        if (joined.size() > 24 || !known.insert(joined).second) continue;
        merges.emplace_back(a, b);
        tokens.push_back(std::move(joined));
    }
    nlohmann::ordered_json vocab = nlohmann::ordered_json::object();
    for (std::size_t i = 0; i < tokens.size(); ++i)
        vocab[tokens[i]] = i;
    nlohmann::ordered_json mergeList = nlohmann::ordered_json::array();
    for (const auto& [a, b] : merges)
        mergeList.push_back(tokens[a] + " " + tokens[b]);
    nlohmann::ordered_json added = nlohmann::ordered_json::array();
    for (const auto& [id, name] : specialNames(spec))
        added.push_back({{"id", id},
                         {"content", name},
                         {"single_word", false},
                         {"lstrip", false},
                         {"rstrip", false},
                         {"normalized", false},
                         {"special", true}});
    auto split = [](const std::string& pattern) {
        return nlohmann::ordered_json{{"type", "Split"}, {"pattern", {{"Regex", pattern}}}, {"behavior", "Isolated"}, {"invert", false}};
    };
    nlohmann::ordered_json tokenizer{
        {"version", "1.0"},
        {"truncation", nullptr},
        {"padding", nullptr},
        {"added_tokens", added},
        {"normalizer", nullptr},
        {"pre_tokenizer",
         {{"type", "Sequence"},
          {"pretokenizers",
           {split(R"(\p{N}{1,3})"),
            split("[一-龥\u3040-ゟ゠-ヿ]+"),
            split(
                R"([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}}},
        {"post_processor", nullptr},
        {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
        {"model",
         {{"type", "BPE"},
          {"dropout", nullptr},
          {"unk_token", nullptr},
          {"continuing_subword_prefix", nullptr},
          {"end_of_word_suffix", nullptr},
          {"fuse_unk", false},
          {"byte_fallback", false},
          {"ignore_merges", false},
          {"vocab", vocab},
          {"merges", mergeList}}}};
    writeJsonFile(dir / "tokenizer.json", tokenizer, 1);
    const auto names = specialNames(spec);
    writeJsonFile(dir / "tokenizer_config.json",
                  {{"tokenizer_class", "PreTrainedTokenizerFast"},
                   {"add_bos_token", false},
                   {"bos_token", names.at(spec.bos)},
                   {"eos_token", names.at(spec.eos)},
                   {"pad_token", names.at(spec.pad)},
                   {"model_max_length", 32768}},
                  1);
}

}  // namespace dragoman
