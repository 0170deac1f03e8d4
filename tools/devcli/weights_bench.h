#pragma once
// `bench weights`: copies of one decoder-only model in different weight types (bf16 and its int8 / FP8 copies),
// decoded side by side in one process.
//
// Why: these VMs' memory bandwidth moves from minute to minute, and separate `bench generate` runs of a few seconds
// each land in different minutes: the same build gave per-round int8 / bf16 decode ratios from 1.23 to 3.02 with
// the runs 15 s apart. Here the models take turns, a block of a few steps each, the order reversed every round
// (A B C, C B A, ...), so each block's neighbours ran against the same memory; a model's ratio to the first is the
// median of its rounds' own ratios, and the streaming-read limit is probed after every round.
#include "runtime/runnable_model.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <vector>

namespace dragoman::bench {

struct WeightsBenchOptions {
    std::int64_t promptTokens = 40;  // the causal workload's prompt (generate_bench.h)
    std::int64_t blockTokens = 8;    // decoding steps per model per turn
    std::int64_t rounds = 12;
};

// Every model decoder-only on the CPU, with the first one's vocabulary. JSON: per model its id, weight type,
// bytes per token, median tokens/s over the rounds, and its per-round ratios to the first model (median and all);
// the bandwidth probed after each round.
nlohmann::ordered_json benchWeights(const std::vector<std::shared_ptr<RunnableModel>>& models, const WeightsBenchOptions& options);

// The dtype most of a model's linear weights are stored in ("bf16", "int8", "fp8", "f32"; "w8a8" for int8 with int8
// activations).
std::string weightTypeOf(const RunnableModel& model);

}  // namespace dragoman::bench
