#pragma once
// `bench generate`: decoding speed on a model, with the memory bandwidth measured in the same run.
#include "runtime/runnable_model.h"

#include <nlohmann/json.hpp>

namespace dragoman::bench {

struct GenerateBenchOptions {
    std::int64_t sequences = 100;  // encoder-decoder workload size
    std::int64_t newTokens = 64;   // most new tokens per sequence
    std::int64_t beams = 1;
    std::int64_t promptTokens = 40;          // causal workload: prompt length
    std::shared_ptr<const LoraSet> adapter;  // causal workload: decode with this LoRA adapter (unmerged)
    std::int64_t batch = 1;                  // causal workload: also decode this many sequences together
};

struct BenchAdapter {
    std::string name;
    std::shared_ptr<const LoraSet> set;
    double loadSeconds = 0;
};

// `bench adapters`: one process, requests alternating base, adapter 1, base, adapter 2, ... (two rounds), each a
// fixed prompt and newTokens greedy tokens. Reports the slowest adapter load, the longest gap between one
// request's end and the next one's prefill when the adapter changes, and time to first token and decode speed
// with and without adapters (medians).
nlohmann::ordered_json benchAdapters(const RunnableModel& model, const std::vector<BenchAdapter>& adapters,
                                     const GenerateBenchOptions& options);

// The fixed source workload shared with tools/baselines/marian_eager.py: sequence i has 8 + (i*7) % 25 ids
// 2 + ((i*131 + j*31) % (vocab - 3)), then EOS.
std::vector<std::vector<TokenId>> benchmarkSources(std::int64_t count, std::int64_t vocab, TokenId eos);

// Weight bytes per second of the engine's decoding kernel (one activation row) over a 512 MiB matrix of `type`
// (kUInt8: FP8 E4M3 codes): how close each weight type's kernel comes to the memory limit.
double measureGemvBandwidth(torch::ScalarType type);

// The first most likely token of a row (greedy decoding's pick).
TokenId topOf(const Logits& logits, std::int64_t row = 0);

// The causal workload's prompt, shared with tools/baselines/hunyuan_eager.py: id j is 2 + (j*131) % (vocab - 3).
std::vector<TokenId> benchmarkPrompt(const CausalLanguageModel& m, std::int64_t tokens);

// A decoder-only model: time to first token for a fixed prompt of promptTokens ids, then decode speed over
// newTokens greedy tokens (EOS ignored, so every run decodes the same count). Shared with
// tools/baselines/hunyuan_eager.py: prompt id j is 2 + (j*131) % (vocab - 3).
nlohmann::ordered_json benchCausal(const RunnableModel& model, const GenerateBenchOptions& options);

nlohmann::ordered_json benchEncoderDecoder(const RunnableModel& model, const GenerateBenchOptions& options);

}  // namespace dragoman::bench
