#include "devcli/weights_bench.h"
#include "devcli/median.h"

#include "devcli/generate_bench.h"
#include "kernels/stream_read.h"
#include "kernels/thread_pool.h"
#include "util/error.h"
#include "util/stopwatch.h"

#include <algorithm>
#include <map>

namespace dragoman::bench {
namespace {

// One model's sequence, decoded a block at a time.
struct Lane {
    const CausalLanguageModel* model = nullptr;
    std::unique_ptr<CausalState> state;
    TokenId next = 0;
    std::vector<double> blockSeconds;  // one per round

    void steps(std::int64_t count) {
        for (std::int64_t i = 0; i < count; ++i)
            next = topOf(model->forward(*state, {next}));
    }
};

}  // namespace

std::string weightTypeOf(const RunnableModel& model) {
    std::map<std::string, std::int64_t> bytes;
    for (const auto& linear : model.linears()) {
        const auto* entry = model.loaded.checkpoint.find(linear.name + ".weight");
        if (!entry) continue;
        const auto type = entry->info->dtype;
        const char* name = type == DType::BF16 ? "bf16" : type == DType::I8 ? "int8" : type == DType::F8_E4M3 ? "fp8" : "f32";
        bytes[name] += static_cast<std::int64_t>(entry->info->nbytes());
    }
    if (bytes.empty()) return "";
    const auto most = std::max_element(bytes.begin(), bytes.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
    // int8 weights whose activations are quantized too (the store's name for the layout)
    return most == "int8" && model.loaded.entry.quantization == "w8a8" ? "w8a8" : most;
}

nlohmann::ordered_json benchWeights(const std::vector<std::shared_ptr<RunnableModel>>& models, const WeightsBenchOptions& options) {
    for (const auto& model : models)  // cmd_bench checks these for the user
        if (!model->causal() || !model->placement.onCpu())
            throw Error("internal", "bench weights: " + model->id() + " is not a CPU decoder");
    c10::InferenceMode guard;
    const auto steps = options.blockTokens * (options.rounds + 1);  // the first block of each is a warm-up
    std::vector<Lane> lanes(models.size());
    for (std::size_t i = 0; i < models.size(); ++i) {
        auto& lane = lanes[i];
        lane.model = models[i]->causal();
        const auto prompt = benchmarkPrompt(*lane.model, options.promptTokens);
        lane.state = lane.model->start(options.promptTokens + steps + 1);
        lane.next = topOf(lane.model->forward(*lane.state, prompt));
        lane.steps(options.blockTokens);
    }
    std::vector<double> bandwidth;
    for (std::int64_t r = 0; r < options.rounds; ++r) {
        for (std::size_t j = 0; j < lanes.size(); ++j) {
            auto& lane = lanes[r % 2 ? lanes.size() - 1 - j : j];
            const auto start = SteadyClock::now();
            lane.steps(options.blockTokens);
            lane.blockSeconds.push_back(secondsSince(start));
        }
        bandwidth.push_back(kernels::streamReadBandwidth(std::size_t(512) << 20, 3));
    }

    nlohmann::ordered_json out{{"prompt_tokens", options.promptTokens},
                               {"block_tokens", options.blockTokens},
                               {"rounds", options.rounds},
                               {"threads", ThreadPool::shared().size()},
                               {"memory_bandwidth_bytes_per_s", bandwidth}};
    const auto& first = lanes.front().blockSeconds;
    const auto tokens = static_cast<double>(options.blockTokens);
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        const auto& seconds = lanes[i].blockSeconds;
        std::vector<double> rates, ratios, efficiency;
        const auto bytes = lanes[i].model->weightBytesPerToken();
        for (std::size_t r = 0; r < seconds.size(); ++r) {
            rates.push_back(tokens / seconds[r]);
            ratios.push_back(first[r] / seconds[r]);
            efficiency.push_back(tokens / seconds[r] * static_cast<double>(bytes) / bandwidth[r]);
        }
        const auto [low, high] = std::minmax_element(ratios.begin(), ratios.end());
        out["models"].push_back({{"model", models[i]->id()},
                                 {"weight_type", weightTypeOf(*models[i])},
                                 {"weight_bytes_per_token", bytes},
                                 {"decode_tokens_per_s", median(rates)},
                                 {"vs_first", median(ratios)},
                                 {"vs_first_min", *low},
                                 {"vs_first_max", *high},
                                 {"vs_first_rounds", ratios},
                                 {"efficiency", median(efficiency)}});
    }
    return out;
}

}  // namespace dragoman::bench
