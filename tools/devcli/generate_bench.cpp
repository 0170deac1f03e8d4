#include "devcli/generate_bench.h"
#include "devcli/median.h"
#include "devcli/weights_bench.h"

#include "kernels/stream_read.h"

#include "decode/batched_steps.h"
#include "decode/beam_search.h"
#include "decode/logits_tensor.h"
#include "decode/seq2seq_session.h"
#include "decode/seq2seq_steps.h"
#include "io/tensor_view.h"
#include "kernels/argmax.h"
#include "kernels/onednn_matmul.h"
#include "kernels/thread_pool.h"
#include "kernels/threads.h"
#include "layers/linear.h"
#include "runtime/torch_backend.h"
#include "util/error.h"
#include "util/stopwatch.h"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

namespace dragoman::bench {
namespace {

using Clock = SteadyClock;

// Bytes of weights one decoder step reads: every decoder weight (cross-attention K/V projections are applied
// once per sequence, not per step) plus the output projection (the shared embedding).
std::uint64_t decoderBytesPerStep(const RunnableModel& model) {
    std::uint64_t bytes = 0;
    for (const auto& [name, tensor] : tensorsOf(model.loaded.checkpoint)) {
        const bool decoder = name.rfind("model.decoder.", 0) == 0;
        const bool crossKv = name.find("encoder_attn.k_proj") != std::string::npos || name.find("encoder_attn.v_proj") != std::string::npos;
        if ((decoder && !crossKv) || name == "model.shared.weight" || name == "final_logits_bias")
            bytes += static_cast<std::uint64_t>(tensor.numel() * tensor.element_size());
    }
    return bytes;
}

// The share of the weight files mapped with 2 MiB page-table entries. Decoding streams every weight per
// token, and 4 KiB entries cost up to a fifth of its speed; the share depends on how the page cache was
// filled (see MappedFile::open), so the benchmark states it next to the speed.
double hugePageShare(const RunnableModel& model) {
    std::uint64_t huge = 0, total = 0;
    for (const auto& file : model.loaded.checkpoint.files()) {
        huge += file->mapping()->hugePageBytes();
        total += file->mapping()->size();
    }
    return total ? static_cast<double>(huge) / static_cast<double>(total) : 0.0;
}

}  // namespace

std::vector<std::vector<TokenId>> benchmarkSources(std::int64_t count, std::int64_t vocab, TokenId eos) {
    std::vector<std::vector<TokenId>> sources;
    for (std::int64_t i = 0; i < count; ++i) {
        const std::int64_t length = 8 + (i * 7) % 25;
        std::vector<TokenId> ids;
        for (std::int64_t j = 0; j < length; ++j)
            ids.push_back(2 + ((i * 131 + j * 31) % (vocab - 3)));
        ids.push_back(eos);
        sources.push_back(std::move(ids));
    }
    return sources;
}

std::vector<TokenId> benchmarkPrompt(const CausalLanguageModel& m, std::int64_t tokens) {
    std::vector<TokenId> prompt;
    for (std::int64_t j = 0; j < tokens; ++j)
        prompt.push_back(2 + (j * 131) % (m.vocabSize() - 3));
    return prompt;
}

double measureGemvBandwidth(torch::ScalarType type) {
    c10::InferenceMode guard;
    // 512 MiB of weights through the engine's own decoding kernel (ops::project, one row), as a step reads them.
    const std::int64_t k = 16384, n = (std::int64_t(512) << 20) / (k * static_cast<std::int64_t>(c10::elementSize(type)));
    torch::Tensor matrix;
    if (type == torch::kInt8 || type == torch::kUInt8)
        matrix = torch::randint(0, 120, {n, k}).to(type);  // valid int8 values and E4M3 codes alike
    else
        matrix = torch::rand({n, k}, torch::kFloat32).to(type);
    const auto vector = torch::rand({1, k}, torch::kFloat32);
    ops::project(vector, matrix);
    double best = 0;
    for (int i = 0; i < 5; ++i) {
        const auto start = Clock::now();
        auto out = ops::project(vector, matrix);
        best = std::max(best, static_cast<double>(matrix.nbytes()) / secondsSince(start));
    }
    return best;
}

TokenId topOf(const Logits& logits, std::int64_t row) {
    return kernels::firstArgmax(logits.row(row), logits.vocab());
}

namespace {

struct TimedRequest {
    double ttft = 0, decodeTokensPerS = 0;
    Clock::time_point start, end;
};

// One greedy request (EOS ignored, so every run decodes the same count): the prompt, then newTokens - 1 steps.
TimedRequest timedRequest(const CausalLanguageModel& m, const std::vector<TokenId>& prompt, std::int64_t newTokens,
                          std::shared_ptr<const LoraSet> adapter) {
    TimedRequest r;
    r.start = Clock::now();
    auto state = m.start(static_cast<std::int64_t>(prompt.size()) + newTokens);
    state->adapter = std::move(adapter);
    auto next = topOf(m.forward(*state, prompt));
    const auto firstToken = Clock::now();
    for (std::int64_t i = 1; i < newTokens; ++i)
        next = topOf(m.forward(*state, {next}));
    r.end = Clock::now();
    r.ttft = std::chrono::duration<double>(firstToken - r.start).count();
    r.decodeTokensPerS =
        newTokens > 1 ? static_cast<double>(newTokens - 1) / std::chrono::duration<double>(r.end - firstToken).count() : 0.0;
    return r;
}

// `batch` sequences (prompts that differ in their ids) prefilled one by one, then decoded together through
// stepMany() for newTokens - 1 steps: the aggregate tokens/s of the decode. Every row's tokens are checked
// against the same sequence decoded alone (the batch must not change a single token).
double batchedDecodeRate(const CausalLanguageModel& m, std::int64_t promptTokens, std::int64_t newTokens, std::int64_t batch,
                         const std::shared_ptr<const LoraSet>& adapter) {
    std::vector<std::unique_ptr<CausalState>> states;
    std::vector<CausalState*> pointers;
    std::vector<TokenId> next;
    std::vector<std::vector<TokenId>> prompts;
    for (std::int64_t b = 0; b < batch; ++b) {
        auto prompt = benchmarkPrompt(m, promptTokens);
        for (auto& id : prompt)
            id = 2 + (id + b * 7) % (m.vocabSize() - 3);
        states.push_back(m.start(promptTokens + newTokens));
        states.back()->adapter = adapter;
        pointers.push_back(states.back().get());
        next.push_back(topOf(m.forward(*states.back(), prompt)));
        prompts.push_back(std::move(prompt));
    }
    std::vector<std::vector<TokenId>> generated(static_cast<std::size_t>(batch));
    const auto start = Clock::now();
    for (std::int64_t i = 1; i < newTokens; ++i) {
        const auto logits = m.stepMany(pointers, next);
        for (std::int64_t b = 0; b < batch; ++b) {
            next[static_cast<std::size_t>(b)] = topOf(logits, b);
            generated[static_cast<std::size_t>(b)].push_back(next[static_cast<std::size_t>(b)]);
        }
    }
    const double rate = static_cast<double>(batch * (newTokens - 1)) / secondsSince(start);
    // The first and the last row, decoded alone.
    for (std::size_t b : {std::size_t(0), static_cast<std::size_t>(batch - 1)}) {
        auto state = m.start(promptTokens + newTokens);
        state->adapter = adapter;
        auto token = topOf(m.forward(*state, prompts[b]));
        for (std::int64_t i = 1; i < newTokens; ++i) {
            token = topOf(m.forward(*state, {token}));
            if (token != generated[b][static_cast<std::size_t>(i - 1)])
                throw Error("internal", "batched decoding changed sequence " + std::to_string(b) + " at step " + std::to_string(i));
        }
    }
    return rate;
}

}  // namespace

nlohmann::ordered_json benchCausal(const RunnableModel& model, const GenerateBenchOptions& options) {
    c10::InferenceMode guard;
    const auto& m = *model.causal();
    const auto prompt = benchmarkPrompt(m, options.promptTokens);
    timedRequest(m, prompt, 2, options.adapter);  // warm-up: first touch of every weight page, allocator pools
    const auto timed = timedRequest(m, prompt, options.newTokens, options.adapter);
    const double ttft = timed.ttft, decodeRate = timed.decodeTokensPerS;
    const auto bytesPerToken = m.weightBytesPerToken();
    nlohmann::ordered_json out{{"model", model.id()},
                               {"architecture", model.architecture},
                               {"device", model.device()},
                               {"prompt_tokens", options.promptTokens},
                               {"new_tokens", options.newTokens},
                               {"ttft_s", ttft},
                               {"decode_tokens_per_s", decodeRate},
                               {"weight_bytes_per_token", bytesPerToken}};
    if (options.adapter) {
        out["adapter"] = options.adapter->name();
        out["adapter_bytes_per_token"] = options.adapter->bytes();
    }
    if (options.batch > 1) {
        const double aggregate = batchedDecodeRate(m, options.promptTokens, options.newTokens, options.batch, options.adapter);
        out["batch"] = options.batch;
        out["aggregate_tokens_per_s"] = aggregate;
        out["batch_speedup"] = aggregate / decodeRate;  // against one sequence, measured just before in this run
    }
    // The bandwidth references below are the host's; a GPU's decode is reported without an efficiency.
    if (!model.placement.onCpu()) return out;
    // The physical limit: every core streaming a large buffer (kernels/stream_read.h), measured around the
    // kernels' own matrix-vector rates for each weight type, so a slow kernel shows as such.
    const double before = kernels::streamReadBandwidth();
    nlohmann::ordered_json gemv{{"f32", measureGemvBandwidth(torch::kFloat32)},
                                {"bf16", measureGemvBandwidth(torch::kBFloat16)},
                                {"int8", measureGemvBandwidth(torch::kInt8)},
                                {"fp8", measureGemvBandwidth(torch::kUInt8)}};
    const double bandwidth = std::max(before, kernels::streamReadBandwidth());
    out["memory_bandwidth_bytes_per_s"] = bandwidth;
    out["gemv_bytes_per_s"] = gemv;
    out["weight_type"] = weightTypeOf(model);
    out["efficiency"] = decodeRate * static_cast<double>(bytesPerToken) / bandwidth;
    out["weights_in_2mib_pages"] = hugePageShare(model);
    out["prompt_kernel"] = kernels::promptKernelName();
    out["threads"] = ThreadPool::shared().size();
    out["aten_threads"] = torch::get_num_threads();
    return out;
}

namespace {

// Greedy decoding of every source, `batch` sequences stepping together in this thread (a finished one's place
// goes to the next source at once); checks each against `alone`. Returns the seconds taken.
double oneThreadBatchSeconds(const Seq2SeqModel& m, const std::vector<std::vector<TokenId>>& sources, const GenerateBenchOptions& options,
                             const LogitsProcessors& processors, const std::vector<std::vector<TokenId>>& alone) {
    struct Running {
        std::size_t source;
        std::unique_ptr<DecoderState> state;
        std::vector<std::vector<TokenId>> history;
        std::vector<TokenId> generated;
    };
    const auto start = Clock::now();
    std::vector<Running> running;
    std::size_t next = 0;
    auto admit = [&] {
        while (static_cast<std::int64_t>(running.size()) < options.batch && next < sources.size()) {
            const auto i = next++;
            running.push_back({i,
                               m.startDecoding(m.encodeSources({sources[i]}, nullptr).front(), 1, 1 + options.newTokens, nullptr),
                               {{m.decoderStartId()}},
                               {}});
        }
    };
    admit();
    while (!running.empty()) {
        std::vector<DecoderState*> states;
        std::vector<std::vector<TokenId>> tokens;
        for (auto& r : running) {
            states.push_back(r.state.get());
            tokens.push_back({r.history[0].back()});
        }
        const auto logits = m.stepMany(states, tokens);
        std::vector<Running> still;
        for (std::size_t b = 0; b < running.size(); ++b) {
            auto& r = running[b];
            auto scores = Logits::allocate(1, logits.vocab());
            std::copy_n(logits.row(static_cast<std::int64_t>(b)), logits.vocab(), scores.row(0));
            processors.apply(scores, r.history);
            const auto token = topOf(scores);
            r.generated.push_back(token);
            r.history[0].push_back(token);
            if (token == m.eosId() || static_cast<std::int64_t>(r.generated.size()) >= options.newTokens) {
                if (r.generated != alone[r.source]) throw Error("internal", "batched decoding changed a sequence");
                continue;
            }
            still.push_back(std::move(r));
        }
        running = std::move(still);
        admit();
    }
    return secondsSince(start);
}

}  // namespace

nlohmann::ordered_json benchEncoderDecoder(const RunnableModel& model, const GenerateBenchOptions& options) {
    const auto& m = *model.seq2seq();
    const auto sources = benchmarkSources(options.sequences, m.vocabSize(), m.eosId());
    GenerationConfig banPad;
    banPad.badWordsIds = {{m.padId()}};
    const LogitsProcessors processors(banPad, 1 + options.newTokens);
    SearchOptions search;
    search.maxNewTokens = options.newTokens;
    search.eosIds = {m.eosId()};
    search.processors = &processors;
    const std::vector<TokenId> prefix{m.decoderStartId()};

    auto runOne = [&](const std::vector<TokenId>& source, double* firstToken) {
        const auto start = Clock::now();
        SearchOptions local = search;
        if (firstToken)
            local.onToken = [&](TokenId) {
                if (*firstToken < 0) *firstToken = secondsSince(start);
                return true;
            };
        Seq2SeqSession session(m, m.encodeSources({source}, nullptr).front(), options.beams, 1 + options.newTokens);
        return options.beams == 1 ? greedySearch(session, prefix, local) : beamSearch(session, prefix, local, {options.beams, 1.0, false});
    };
    runOne(sources.front(), nullptr);  // warm-up

    double ttft = -1;
    std::int64_t tokens = 0;
    const auto start = Clock::now();
    for (std::size_t i = 0; i < sources.size(); ++i)
        tokens += static_cast<std::int64_t>(runOne(sources[i], i == 0 ? &ttft : nullptr).size());
    const double elapsed = secondsSince(start);
    const double bandwidth = kernels::streamReadBandwidth();
    const auto bytesPerToken = decoderBytesPerStep(model);
    const double tokensPerSecond = tokens / elapsed;
    nlohmann::ordered_json out{{"model", model.id()},
                               {"architecture", model.architecture},
                               {"sequences", options.sequences},
                               {"beams", options.beams},
                               {"target_tokens", tokens},
                               {"seconds", elapsed},
                               {"target_tokens_per_s", tokensPerSecond},
                               {"ttft_s", ttft},
                               {"decode_tokens_per_s", tokensPerSecond},
                               {"weight_bytes_per_token", bytesPerToken},
                               {"memory_bandwidth_bytes_per_s", bandwidth},
                               {"weights_in_2mib_pages", hugePageShare(model)},
                               {"threads", ThreadPool::shared().size()},
                               {"aten_threads", torch::get_num_threads()}};
    // Greedy decoding reads every decoder weight once per token: tokens/s x bytes/token is the bandwidth it
    // uses, and its share of the measured limit is how close to the memory bound the decoder runs.
    if (options.beams == 1) out["efficiency"] = tokensPerSecond * static_cast<double>(bytesPerToken) / bandwidth;
    if (options.batch > 1) {
        // The same sources, `batch` at a time, two ways: as the CLI and the server run them (each request on its
        // own thread, steps shared through a StepBatcher), and in one thread stepping every unfinished sequence
        // through stepMany() (no hand-off between threads: what a single-threaded scheduler could reach).
        // Both must give every sequence its tokens alone.
        std::vector<std::vector<TokenId>> alone;
        for (const auto& source : sources)
            alone.push_back(runOne(source, nullptr));
        std::vector<std::vector<TokenId>> shared(sources.size());
        StepBatcher batcher(seq2seqSteps(m), 16);
        std::atomic<std::size_t> next = 0;
        const auto threadsStart = Clock::now();
        std::vector<std::thread> threads;
        for (std::int64_t t = 0; t < options.batch; ++t)
            threads.emplace_back([&] {
                for (auto i = next++; i < sources.size(); i = next++) {
                    std::shared_ptr<const SourceMemory> encoded;
                    batcher.between([&] { encoded = m.encodeSources({sources[i]}, nullptr).front(); });
                    Seq2SeqSession session(m, encoded, options.beams, 1 + options.newTokens, nullptr, &batcher);
                    shared[i] = options.beams == 1 ? greedySearch(session, prefix, search)
                                                   : beamSearch(session, prefix, search, {options.beams, 1.0, false});
                }
            });
        for (auto& t : threads)
            t.join();
        const double threadsSeconds = secondsSince(threadsStart);
        if (shared != alone) throw Error("internal", "decoding on threads that share steps changed a sequence");
        out["batch"] = options.batch;
        out["batch_threads_tokens_per_s"] = tokens / threadsSeconds;
        out["batch_threads_speedup"] = elapsed / threadsSeconds;
        out["batch_widest_step"] = batcher.counts().widest;
        if (options.beams == 1) {
            const double stepSeconds = oneThreadBatchSeconds(m, sources, options, processors, alone);
            out["batch_one_thread_tokens_per_s"] = tokens / stepSeconds;
            out["batch_one_thread_speedup"] = elapsed / stepSeconds;
        }
    }
    return out;
}

nlohmann::ordered_json benchAdapters(const RunnableModel& model, const std::vector<BenchAdapter>& adapters,
                                     const GenerateBenchOptions& options) {
    c10::InferenceMode guard;
    if (!model.causal())
        throw Error("unsupported", "bench adapters measures decoder-only models; " + model.id() + " is " + model.architecture);
    const auto& m = *model.causal();
    const auto prompt = benchmarkPrompt(m, options.promptTokens);
    std::vector<std::shared_ptr<const LoraSet>> order;  // base, A, base, B, ... twice
    for (int round = 0; round < 2; ++round)
        for (const auto& a : adapters) {
            order.push_back(nullptr);
            order.push_back(a.set);
        }
    std::vector<double> ttftBase, ttftAdapter, rateBase, rateAdapter;
    double swap = 0;
    auto previousEnd = Clock::now();
    const LoraSet* previous = nullptr;
    bool first = true;
    for (const auto& adapter : order) {
        const auto timed = timedRequest(m, prompt, options.newTokens, adapter);
        if (!first && adapter.get() != previous) swap = std::max(swap, std::chrono::duration<double>(timed.start - previousEnd).count());
        previousEnd = timed.end;
        (adapter ? ttftAdapter : ttftBase).push_back(timed.ttft);
        (adapter ? rateAdapter : rateBase).push_back(timed.decodeTokensPerS);
        previous = adapter.get();
        first = false;
    }
    double slowestLoad = 0;
    nlohmann::ordered_json loads = nlohmann::ordered_json::object();
    for (const auto& a : adapters) {
        slowestLoad = std::max(slowestLoad, a.loadSeconds);
        loads[a.name] = a.loadSeconds;
    }
    return {{"model", model.id()},
            {"adapters", adapters.size()},
            {"requests", order.size()},
            {"prompt_tokens", options.promptTokens},
            {"new_tokens", options.newTokens},
            {"adapter_load_s", slowestLoad},
            {"adapter_load_s_each", loads},
            {"swap_s", swap},
            {"ttft_s_base", median(ttftBase)},
            {"ttft_s_adapter", median(ttftAdapter)},
            {"decode_tokens_per_s_base", median(rateBase)},
            {"decode_tokens_per_s_adapter", median(rateAdapter)}};
}

}  // namespace dragoman::bench
