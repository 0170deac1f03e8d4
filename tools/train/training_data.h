#pragma once
// Parallel examples for the default model, tokenized by the very tokenizer the engine serves with, and the
// token-budget batches training consumes.
#include "text/marian_tokenizer.h"

#include <torch/types.h>

#include <filesystem>
#include <vector>

namespace dragoman::train {

struct Example {
    std::vector<TokenId> source;  // >>lang<< pieces </s>
    std::vector<TokenId> target;  // pieces </s>
};

// Reads TARGET_LANG <tab> SOURCE <tab> TARGET lines (tools/train/prepare_corpus.py). Examples longer than
// maxTokens on either side are skipped. Throws Error("input") on a malformed line or an unknown language.
std::vector<Example> loadExamples(const std::filesystem::path& tsv, const MarianTokenizer& tokenizer, std::size_t maxTokens);

// Groups examples of similar length so that each batch holds about `targetTokens` padded target tokens,
// in an order that depends only on `seed`.
std::vector<std::vector<std::size_t>> makeBatches(const std::vector<Example>& examples, std::size_t targetTokens, std::uint64_t seed);

struct BatchTensors {
    torch::Tensor source, sourceValid, targetIn, targetOut;  // [B, S], [B, S] bool, [B, T], [B, T] (pad = ignored)
    std::int64_t targetTokens = 0;
};

BatchTensors toTensors(const std::vector<Example>& examples, const std::vector<std::size_t>& batch, TokenId pad, TokenId decoderStart);

}  // namespace dragoman::train
