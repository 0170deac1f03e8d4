#pragma once
// A byte-level BPE tokenizer.json of a real model's size (HY-MT1.5: 120k tokens), for load-time benchmarks
// and for running synthetic checkpoints end to end: the 256 byte symbols, pseudo-random merges up to the
// ordinary vocabulary, then the model's special tokens at their real ids, HY-MT's pre-tokenizer regexes.
#include <cstdint>
#include <filesystem>

namespace dragoman {

struct SyntheticTokenizerSpec {
    std::int64_t vocabSize = 0;     // including the special tokens
    std::int64_t firstSpecial = 0;  // ids from here on are added tokens
    bool legacyNames = false;       // HY-MT1.5-7B's <|startoftext|>/<|extra_N|> instead of <｜hy_...｜>
    std::int64_t bos = 0, eos = 0, pad = 0;
    std::uint64_t seed = 0;
};

// Writes tokenizer.json and tokenizer_config.json into `dir`. Throws Error("io").
void writeSyntheticTokenizer(const SyntheticTokenizerSpec& spec, const std::filesystem::path& dir);

}  // namespace dragoman
