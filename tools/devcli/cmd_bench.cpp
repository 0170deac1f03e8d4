#include "api/model_of.h"
#include "cli/command_line.h"
#include "devcli/dev_commands.h"
#include "devcli/dev_model_option.h"
#include "devcli/generate_bench.h"
#include "devcli/kernels_bench.h"
#include "devcli/load_baselines.h"
#include "devcli/weights_bench.h"
#include "io/checkpoint.h"
#include "kernels/int8_panels.h"
#include "kernels/stream_read.h"
#include "kernels/thread_pool.h"
#include "kernels/threads.h"
#include "load/model_loader.h"
#include "load/page_in.h"
#include "runtime/device.h"
#include "util/error.h"
#include "util/stopwatch.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>

namespace dragoman::cli {
namespace {

void evictAll(const std::vector<std::filesystem::path>& files) {
    for (const auto& f : files)
        if (!evictFromPageCache(f)) throw Error("io", f.string() + ": cannot evict from the page cache");
}

int benchLoad(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli bench load"),
                    QStringLiteral("Time a model load: open/map, build, page-in, ready; bytes, copies, peak RSS."));
    cmd.addOption({QStringLiteral("model"), QStringLiteral("Model id or folder"), QStringLiteral("M")});
    cmd.addOption({QStringLiteral("cold"), QStringLiteral("Evict the model's files from the page cache first")});
    cmd.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object")});
    cmd.addOption(
        {QStringLiteral("baselines"), QStringLiteral("Also measure, in the same run, a raw sequential read and an eager copying load")});
    if (!cmd.parse(args)) return kExitOk;

    const ModelStore store;
    const auto entry = cmd.isSet("model") ? store.resolve(cmd.value("model").toStdString()) : store.defaultModel();
    store.ensureManifest(entry);  // first-sight hashing is a one-time cost, not part of a load
    const auto files = checkpointFiles(entry.dir);
    const bool cold = cmd.isSet("cold");

    nlohmann::ordered_json out{{"model", entry.id}, {"mode", cold ? "cold" : "warm"}};
    if (cmd.isSet("baselines")) {
        if (cold) evictAll(files);
        const auto raw = bench::rawRead(files);
        if (cold) evictAll(files);
        const auto eager = bench::eagerCopyLoad(files);
        out["raw_read_s"] = raw.seconds;
        out["raw_read_bytes_per_s"] = raw.seconds > 0 ? raw.bytes / raw.seconds : 0.0;
        out["eager_copy_s"] = eager.seconds;
        out["eager_copy_peak_rss_bytes"] = eager.peakRssBytes;
    }
    if (cold) evictAll(files);

    const auto model = loadModel(store, entry.id, {});
    const auto& s = model.stats;
    out["open_s"] = s.resolveSeconds + s.verifySeconds + s.mapSeconds;
    out["build_s"] = s.buildSeconds;
    out["page_in_s"] = s.pageInSeconds;
    out["ready_s"] = s.readySeconds;
    out["bytes"] = s.bytes;
    out["copies"] = s.copies;
    out["peak_rss_bytes"] = bench::peakRssBytes();
    out["page_in_bytes_per_s"] = s.pageInSeconds > 0 ? s.bytes / s.pageInSeconds : 0.0;
    if (out.contains("raw_read_s") && out["raw_read_s"].get<double>() > 0 && s.pageInSeconds > 0) {
        out["page_in_vs_raw_read"] = out["page_in_bytes_per_s"].get<double>() / out["raw_read_bytes_per_s"].get<double>();
        out["eager_copy_vs_ready"] = out["eager_copy_s"].get<double>() / s.readySeconds;
    }
    if (cmd.isSet("json")) {
        print(out.dump() + "\n");
        return kExitOk;
    }
    std::string text =
        fmt::format("model {} ({}), {:.1f} MB in {} file(s)\n", entry.id, cold ? "cold" : "warm", s.bytes / 1e6, files.size());
    text += fmt::format("  open {:.4f} s  build {:.4f} s  page-in {:.4f} s ({:.2f} GB/s)  ready {:.4f} s\n", out["open_s"].get<double>(),
                        s.buildSeconds, s.pageInSeconds, out["page_in_bytes_per_s"].get<double>() / 1e9, s.readySeconds);
    text += fmt::format("  copies {}  peak RSS {:.1f} MB\n", s.copies, out["peak_rss_bytes"].get<std::uint64_t>() / 1e6);
    if (out.contains("raw_read_s"))
        text += fmt::format("  baselines: raw read {:.3f} s ({:.2f} GB/s), eager copy {:.3f} s (peak RSS {:.1f} MB)\n",
                            out["raw_read_s"].get<double>(), out["raw_read_bytes_per_s"].get<double>() / 1e9,
                            out["eager_copy_s"].get<double>(), out["eager_copy_peak_rss_bytes"].get<std::uint64_t>() / 1e6);
    print(text);
    return kExitOk;
}

int benchGenerate(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli bench generate"),
                    QStringLiteral("Decoding speed: time to first token, tokens/s, weight bytes per token, and the memory "
                                   "bandwidth measured in the same run."));
    cmd.addOption(modelOption());
    cmd.addOption({QStringLiteral("prompt-tokens"), QStringLiteral("Prompt length of a causal model (default 40)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("new-tokens"), QStringLiteral("Most new tokens per sequence (default 64)"), QStringLiteral("N")});
    cmd.addOption(
        {QStringLiteral("sequences"), QStringLiteral("Source sequences of an encoder-decoder model (default 100)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("beams"), QStringLiteral("Beam search with K beams (default: greedy)"), QStringLiteral("K")});
    cmd.addOption({QStringLiteral("batch"), QStringLiteral("Also decode N sequences together"), QStringLiteral("N")});
    cmd.addOption(adapterOption());
    cmd.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object")});
    if (!cmd.parse(args)) return kExitOk;
    bench::GenerateBenchOptions options;
    options.batch = cmd.intValue("batch", 1, 1, 64);
    options.newTokens = cmd.intValue("new-tokens", 64, 1, 4096);
    options.sequences = cmd.intValue("sequences", 100, 1, 100000);
    options.beams = cmd.intValue("beams", 1, 1, 16);
    options.promptTokens = cmd.intValue("prompt-tokens", 40, 1, 100000);
    const auto model = openModelOption(cmd);
    options.adapter = devAdapterFor(cmd, *model);
    if (options.adapter && !model->causal()) throw UsageError("bench generate --adapter measures decoder-only models");
    if (model->causal()) {
        const auto out = bench::benchCausal(*model, options);
        if (cmd.isSet("json")) {
            print(out.dump() + "\n");
            return kExitOk;
        }
        std::string text = fmt::format("{} ({}): first token after a {}-token prompt {:.3f} s; decode {:.2f} tokens/s over {} tokens\n",
                                       model->id(), out["device"].get<std::string>(), options.promptTokens, out["ttft_s"].get<double>(),
                                       out["decode_tokens_per_s"].get<double>(), options.newTokens);
        if (out.contains("efficiency"))  // not on a GPU: the bandwidth reference is the host's
            text += fmt::format(
                "  {:.1f} MB of weights per token, memory bandwidth {:.1f} GB/s, efficiency {:.2f}; {:.0f}% of the weights in 2 MiB "
                "pages\n",
                out["weight_bytes_per_token"].get<std::int64_t>() / 1e6, out["memory_bandwidth_bytes_per_s"].get<double>() / 1e9,
                out["efficiency"].get<double>(), 100 * out["weights_in_2mib_pages"].get<double>());
        if (out.contains("batch"))
            text += fmt::format("  batch of {}: {:.2f} tokens/s in all, {:.2f}x one sequence\n", out["batch"].get<std::int64_t>(),
                                out["aggregate_tokens_per_s"].get<double>(), out["batch_speedup"].get<double>());
        print(text);
        return kExitOk;
    }
    const auto out = bench::benchEncoderDecoder(*model, options);
    if (cmd.isSet("json")) {
        print(out.dump() + "\n");
        return kExitOk;
    }
    print(
        fmt::format("{}: {} sequences, {} beam(s): {} target tokens in {:.2f} s = {:.1f} tokens/s; first token {:.4f} s\n"
                    "  {:.1f} MB of weights per token, memory bandwidth {:.1f} GB/s{}; {:.0f}% of the weights in 2 MiB pages\n",
                    model->id(), options.sequences, options.beams, out["target_tokens"].get<std::int64_t>(), out["seconds"].get<double>(),
                    out["target_tokens_per_s"].get<double>(), out["ttft_s"].get<double>(),
                    out["weight_bytes_per_token"].get<std::uint64_t>() / 1e6, out["memory_bandwidth_bytes_per_s"].get<double>() / 1e9,
                    out.contains("efficiency") ? fmt::format(", efficiency {:.2f}", out["efficiency"].get<double>()) : "",
                    100 * out["weights_in_2mib_pages"].get<double>()));
    if (out.contains("batch")) {
        std::string batch =
            fmt::format("  batch of {}: on threads sharing steps {:.1f} tokens/s ({:.2f}x one at a time)", out["batch"].get<std::int64_t>(),
                        out["batch_threads_tokens_per_s"].get<double>(), out["batch_threads_speedup"].get<double>());
        if (out.contains("batch_one_thread_tokens_per_s"))
            batch += fmt::format("; in one thread {:.1f} tokens/s ({:.2f}x)", out["batch_one_thread_tokens_per_s"].get<double>(),
                                 out["batch_one_thread_speedup"].get<double>());
        print(batch + "\n");
    }
    return kExitOk;
}

int benchWeights(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli bench weights"),
                    QStringLiteral("Decoding speed of copies of one model in different weight types (bf16, int8, FP8), side by side "
                                   "in one process: blocks of steps taking turns, ratios to the first model per round, and the "
                                   "memory bandwidth probed after every round."));
    cmd.addRepeatableOption(
        {QStringLiteral("model"), QStringLiteral("Model id or folder (two or more; ratios are to the first)"), QStringLiteral("M")});
    cmd.addOption({QStringLiteral("prompt-tokens"), QStringLiteral("Prompt length (default 40)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("block-tokens"), QStringLiteral("Decoding steps per model per turn (default 8)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("rounds"), QStringLiteral("Turns of every model (default 12)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object")});
    if (!cmd.parse(args)) return kExitOk;
    const auto names = cmd.values("model");
    if (names.size() < 2) throw UsageError("bench weights needs two --model options or more");
    bench::WeightsBenchOptions options;
    options.promptTokens = cmd.intValue("prompt-tokens", 40, 1, 100000);
    options.blockTokens = cmd.intValue("block-tokens", 8, 1, 4096);
    options.rounds = cmd.intValue("rounds", 12, 1, 10000);
    configureThreads();
    const ModelStore store;
    std::vector<std::shared_ptr<RunnableModel>> models;
    for (const auto& name : names) {
        OpenOptions open;
        open.device = deviceOverride(open.device);
        auto model = openModel(store, store.resolve(name.toStdString()).id, open);
        if (!model->causal()) throw UsageError("bench weights measures decoder-only models; " + model->id() + " is not one");
        if (!model->placement.onCpu()) throw UsageError("bench weights measures the CPU's memory; " + model->id() + " runs elsewhere");
        if (!models.empty() && model->causal()->vocabSize() != models.front()->causal()->vocabSize())
            throw UsageError("bench weights compares copies of one model; " + model->id() + " has another vocabulary");
        // Each copy's sequence holds the prompt and every turn's steps (one warm-up turn), within its positions.
        const auto tokens = options.promptTokens + options.blockTokens * (options.rounds + 1) + 1;
        if (tokens > model->causal()->maxPositions())
            throw UsageError(fmt::format("bench weights: {} tokens ({} prompt, {} turns of {} and a warm-up) exceed {}'s {} positions",
                                         tokens, options.promptTokens, options.rounds, options.blockTokens, model->id(),
                                         model->causal()->maxPositions()));
        models.push_back(std::move(model));
    }
    const auto out = bench::benchWeights(models, options);
    if (cmd.isSet("json")) {
        print(out.dump() + "\n");
        return kExitOk;
    }
    const auto& bandwidth = out["memory_bandwidth_bytes_per_s"];
    const auto [low, high] = std::minmax_element(bandwidth.begin(), bandwidth.end());
    std::string text = fmt::format("{} rounds of {} steps each, turns alternating; streaming-read bandwidth {:.1f}-{:.1f} GB/s\n",
                                   options.rounds, options.blockTokens, low->get<double>() / 1e9, high->get<double>() / 1e9);
    for (const auto& m : out["models"])
        text += fmt::format("  {} ({}): {:.0f} MB/token, {:.2f} tokens/s, {:.2f}x the first (rounds {:.2f}-{:.2f}), {:.2f} of the limit\n",
                            m["model"].get<std::string>(), m["weight_type"].get<std::string>(),
                            m["weight_bytes_per_token"].get<std::int64_t>() / 1e6, m["decode_tokens_per_s"].get<double>(),
                            m["vs_first"].get<double>(), m["vs_first_min"].get<double>(), m["vs_first_max"].get<double>(),
                            m["efficiency"].get<double>());
    print(text);
    return kExitOk;
}

// What a user feels: from the start of a load to a model ready to translate (weights and tokenizer; the
// one-time hashing at first sight excluded, as in bench load), then the latency of translating a short
// sentence, warm, over several repeats (median and worst).
int benchTranslate(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli bench translate"),
                    QStringLiteral("Time to a ready model, and the latency of translating a short sentence."));
    cmd.addOption(modelOption());
    cmd.addOption({QStringLiteral("from"), QStringLiteral("Source language (default en)"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("to"), QStringLiteral("Target language (default de)"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("text"), QStringLiteral("Sentence to translate (default: a 12-word sentence)"), QStringLiteral("T")});
    cmd.addOption({QStringLiteral("repeat"), QStringLiteral("Timed translations (default 20)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object")});
    if (!cmd.parse(args)) return kExitOk;
    using Clock = SteadyClock;
    configureThreads();
    const ModelStore store;
    const auto entry = resolveModel(cmd, store);
    store.ensureManifest(entry);
    const auto loadStart = Clock::now();
    const auto model = openModel(store, entry.id);
    const auto translator = modelOf(model);
    const double ready = secondsSince(loadStart);

    TranslationRequest request;
    request.text = cmd.isSet("text") ? cmd.value("text").toStdString() : "My brother and I are going to visit our grandmother next week.";
    request.from = cmd.isSet("from") ? cmd.value("from").toStdString() : "en";
    request.to = cmd.isSet("to") ? cmd.value("to").toStdString() : "de";
    const auto repeat = static_cast<int>(cmd.intValue("repeat", 20, 1, 100000));
    TranslationStats stats;
    const auto output = translator->translate(request, &stats);  // warm-up
    std::vector<double> seconds;
    for (int i = 0; i < repeat; ++i) {
        const auto start = Clock::now();
        translator->translate(request);
        seconds.push_back(secondsSince(start));
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2], worst = seconds.back();
    nlohmann::ordered_json out{{"model", entry.id},
                               {"ready_s", ready},
                               {"text", request.text},
                               {"output", output},
                               {"source_tokens", stats.sourceTokens},
                               {"generated_tokens", stats.generatedTokens},
                               {"repeat", repeat},
                               {"median_s", median},
                               {"max_s", worst}};
    if (cmd.isSet("json")) {
        print(out.dump() + "\n");
        return kExitOk;
    }
    print(fmt::format(
        "{}: ready {:.1f} ms after the load started\n  \"{}\" -> \"{}\"\n"
        "  {} source tokens -> {} tokens: median {:.1f} ms, worst {:.1f} ms over {} runs\n",
        entry.id, ready * 1e3, request.text, output, stats.sourceTokens, stats.generatedTokens, median * 1e3, worst * 1e3, repeat));
    return kExitOk;
}

int benchAdapters(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli bench adapters"),
                    QStringLiteral("One base model, several LoRA adapters: load times, the cost of switching between requests, and "
                                   "time to first token and decode speed with and without an adapter."));
    cmd.addOption(modelOption());
    cmd.addRepeatableOption({QStringLiteral("adapter"), QStringLiteral("A LoRA adapter folder (repeat for several)"), QStringLiteral("A")});
    cmd.addOption({QStringLiteral("prompt-tokens"), QStringLiteral("Prompt length (default 40)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("new-tokens"), QStringLiteral("New tokens per request (default 32)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object")});
    if (!cmd.parse(args)) return kExitOk;
    const auto paths = cmd.values("adapter");
    if (paths.isEmpty()) throw UsageError("bench adapters needs at least one --adapter");
    bench::GenerateBenchOptions options;
    options.promptTokens = cmd.intValue("prompt-tokens", 40, 1, 100000);
    options.newTokens = cmd.intValue("new-tokens", 32, 1, 4096);
    const auto model = openModelOption(cmd);
    std::vector<bench::BenchAdapter> adapters;
    for (const auto& path : paths) {
        const auto dir = findAdapter(path.toStdString());
        const auto start = SteadyClock::now();
        auto set = model->loadAdapter(dir, dir.filename().string());
        adapters.push_back({dir.filename().string(), std::move(set), secondsSince(start)});
    }
    const auto out = bench::benchAdapters(*model, adapters, options);
    if (cmd.isSet("json")) {
        print(out.dump() + "\n");
        return kExitOk;
    }
    print(fmt::format(
        "{}: {} adapter(s), slowest load {:.1f} ms, longest switch {:.3f} ms\n"
        "  first token {:.3f} s base, {:.3f} s with an adapter; decode {:.2f} tokens/s base, {:.2f} with an adapter ({:.2f}x)\n",
        model->id(), adapters.size(), out["adapter_load_s"].get<double>() * 1e3, out["swap_s"].get<double>() * 1e3,
        out["ttft_s_base"].get<double>(), out["ttft_s_adapter"].get<double>(), out["decode_tokens_per_s_base"].get<double>(),
        out["decode_tokens_per_s_adapter"].get<double>(),
        out["decode_tokens_per_s_adapter"].get<double>() / out["decode_tokens_per_s_base"].get<double>()));
    return kExitOk;
}

// The W8A8 products and decoding attention alone, against the CPU's vpdpbusd peak (devcli/kernels_bench.h).
int benchKernels(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli bench kernels"),
                    QStringLiteral("W8A8 products (the one-row kernel, panels laid out per call, panels kept) and decoding attention, "
                                   "side by side in one process, against the CPU's vpdpbusd peak on every kernel thread."));
    cmd.addOption(
        {QStringLiteral("rounds"), QStringLiteral("Alternating rounds per measure, the median reported (default 5)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object")});
    if (!cmd.parse(args)) return kExitOk;
    bench::KernelsBenchOptions options;
    options.rounds = cmd.intValue("rounds", 5, 1, 1000);
    configureThreads();
    const auto out = bench::benchKernels(options);
    if (cmd.isSet("json")) {
        print(out.dump() + "\n");
        return kExitOk;
    }
    std::string text = fmt::format("{} threads, W8A8 on {}; vpdpbusd peak {:.0f} GMAC/s\n", out["threads"].get<int>(),
                                   out["w8a8_kernel"].get<std::string>(), out["vnni_peak_gmacs"].get<double>());
    for (const auto& p : out["products"]) {
        text += fmt::format("  {} x {} x {}: one-row {:.0f} GMAC/s", p["m"].get<std::int64_t>(), p["n"].get<std::int64_t>(),
                            p["k"].get<std::int64_t>(), p["one_row_gmacs"].get<double>());
        if (p.contains("panels_per_call_gmacs")) text += fmt::format(", panels per call {:.0f}", p["panels_per_call_gmacs"].get<double>());
        if (p.contains("panels_kept_gmacs"))
            text += fmt::format(", kept {:.0f} ({:.2f}x one-row, {:.2f} of the peak), kept and streamed {:.0f}",
                                p["panels_kept_gmacs"].get<double>(), p["kept_vs_one_row"].get<double>(), p.value("kept_of_peak", 0.0),
                                p["panels_streamed_gmacs"].get<double>());
        text += "\n";
    }
    for (const auto& a : out["attention"])
        text += fmt::format("  attention, {} requests x {} heads of {} over {} keys: {:.1f} ns per key and head\n",
                            a["requests"].get<int>(), a["heads"].get<int>(), a["head_dim"].get<int>(), a["keys"].get<std::int64_t>(),
                            a["ns_per_key_and_head"].get<double>());
    print(text);
    return kExitOk;
}

// The machine's own limits, for benchmarks that set a run against them (tests/bench/batch_translate.sh): the
// vpdpbusd peak on every kernel thread, and the read bandwidth over buffers of given sizes (one the size of a model's
// weights read each step stays in the last-level cache where it fits; a large one reads memory).
int benchLimits(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli bench limits"),
                    QStringLiteral("The vpdpbusd peak on every kernel thread and the read bandwidth over buffers of the given sizes."));
    cmd.addRepeatableOption(
        {QStringLiteral("read"), QStringLiteral("Bytes of a buffer to read (repeatable; default 1 GiB)"), QStringLiteral("BYTES")});
    cmd.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object")});
    if (!cmd.parse(args)) return kExitOk;
    std::vector<std::size_t> sizes;
    for (const auto& value : cmd.values(QStringLiteral("read"))) {
        bool ok = false;
        const auto bytes = value.toLongLong(&ok);
        if (!ok || bytes < 4096 || bytes > (std::int64_t{64} << 30))
            throw UsageError("--read takes a size in bytes from 4096 to 64 GiB, not '" + value.toStdString() + "'");
        sizes.push_back(static_cast<std::size_t>(bytes));
    }
    if (sizes.empty()) sizes.push_back(std::size_t{1} << 30);
    configureThreads();
    nlohmann::ordered_json out;
    out["threads"] = static_cast<int>(dragoman::ThreadPool::shared().size());
    out["vnni_peak_gmacs"] = kernels::vnniPeakMacsPerSecond() / 1e9;
    out["read"] = nlohmann::json::array();
    for (const auto bytes : sizes)
        out["read"].push_back(
            {{"bytes", bytes}, {"gbs", kernels::streamReadBandwidth(bytes, bytes < (std::size_t{256} << 20) ? 20 : 3) / 1e9}});
    if (cmd.isSet("json")) {
        print(out.dump() + "\n");
        return kExitOk;
    }
    std::string text =
        fmt::format("{} threads; vpdpbusd peak {:.0f} GMAC/s\n", out["threads"].get<int>(), out["vnni_peak_gmacs"].get<double>());
    for (const auto& r : out["read"])
        text += fmt::format("  reading {:.1f} MB: {:.1f} GB/s\n", r["bytes"].get<double>() / 1e6, r["gbs"].get<double>());
    print(text);
    return kExitOk;
}

}  // namespace

int runBench(const QStringList& args) {
    const QString kind = args.value(1);
    const QStringList rest = actionArgs(args);
    if (kind == "load") return benchLoad(rest);
    if (kind == "generate") return benchGenerate(rest);
    if (kind == "translate") return benchTranslate(rest);
    if (kind == "adapters") return benchAdapters(rest);
    if (kind == "weights") return benchWeights(rest);
    if (kind == "kernels") return benchKernels(rest);
    if (kind == "limits") return benchLimits(rest);
    if (kind == "--help" || kind == "-h") {
        print(
            QStringLiteral("Usage: dragoman-cli bench load|generate|translate|adapters|weights --model M [--json] ...\n"
                           "       dragoman-cli bench kernels [--rounds N] [--json]\n"
                           "       dragoman-cli bench limits [--read BYTES]... [--json]\n"));
        return kExitOk;
    }
    throw UsageError(kind.isEmpty() ? "bench needs a kind: load, generate, translate, adapters, weights, kernels or limits"
                                    : "unknown bench '" + kind.toStdString() + "'");
}

}  // namespace dragoman::cli
