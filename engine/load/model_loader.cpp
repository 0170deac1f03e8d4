#include "load/model_loader.h"

#include "load/memory_guard.h"
#include "load/page_in.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/log.h"
#include "util/stopwatch.h"

#include <chrono>
#include <fstream>

namespace dragoman {
namespace {

using Clock = SteadyClock;

// Bytes per second the phases are expected to run at: they only shape the progress bar.
constexpr double kHashBytesPerSecond = 1.0e9, kReadBytesPerSecond = 2.0e9;

}  // namespace

std::string_view phaseName(LoadPhase phase) {
    switch (phase) {
        case LoadPhase::Resolve:
            return "Finding the model";
        case LoadPhase::Verify:
            return "Checking files";
        case LoadPhase::Map:
            return "Mapping weights";
        case LoadPhase::PageIn:
            return "Reading weights";
        case LoadPhase::Network:
            return "Building the network";
        case LoadPhase::Tokenizer:
            return "Reading the tokenizer";
    }
    return "Loading";
}

std::vector<ProgressMeter::Phase> loadPhases() {
    std::vector<ProgressMeter::Phase> phases;
    for (auto phase : {LoadPhase::Resolve, LoadPhase::Verify, LoadPhase::Map, LoadPhase::PageIn, LoadPhase::Network, LoadPhase::Tokenizer})
        phases.push_back({std::string(phaseName(phase)), 0.01});
    phases[index(LoadPhase::Network)].weight = 0.02;
    phases[index(LoadPhase::Tokenizer)].weight = 0.05;
    return phases;
}

LoadedModel loadModel(const ModelStore& store, const std::string& idOrPath, const LoadOptions& options, ProgressMeter* outer) {
    const auto start = Clock::now();
    ProgressMeter own(options.progress, options.cancel, loadPhases());
    if (!outer) {  // nothing follows the load: its share of the bar goes to the page-in
        own.setWeight(index(LoadPhase::Network), 0);
        own.setWeight(index(LoadPhase::Tokenizer), 0);
    }
    ProgressMeter& meter = outer ? *outer : own;
    auto report = [&meter](LoadPhase phase, std::uint64_t done, std::uint64_t total) { meter.report(index(phase), done, total); };
    LoadStats stats;

    report(LoadPhase::Resolve, 0, 1);
    auto phaseStart = Clock::now();
    ModelEntry entry = store.resolve(idOrPath);
    stats.resolveSeconds = secondsSince(phaseStart);
    if (entry.modelType == "peft_lora")
        throw Error("model_not_found", entry.id + " is a LoRA adapter, not a model: load its base" +
                                           (entry.base.empty() ? std::string() : " (" + entry.base + ")") + " and apply it with --adapter");
    const bool firstSight = !std::filesystem::exists(store.manifestPath(entry));
    if (firstSight) meter.setWeight(index(LoadPhase::Verify), static_cast<double>(entry.weightBytes) / kHashBytesPerSecond);
    if (options.pageIn) meter.setWeight(index(LoadPhase::PageIn), static_cast<double>(entry.weightBytes) / kReadBytesPerSecond);
    report(LoadPhase::Resolve, 1, 1);
    const log::Ctx ctx{entry.id};

    // Integrity: hashed once (first sight), afterwards only stat.
    report(LoadPhase::Verify, 0, 1);
    phaseStart = Clock::now();
    store.ensureUnchanged(entry,
                          [&](std::uint64_t done, std::uint64_t total) { return meter.keepGoing(index(LoadPhase::Verify), done, total); });
    stats.hashedOnLoad = firstSight;
    stats.verifySeconds = secondsSince(phaseStart);
    report(LoadPhase::Verify, 1, 1);

    LoadedModel model{entry, readJsonObject(entry.dir / "config.json", "config"), {}, {}};
    stats.bytes = entry.weightBytes;
    checkFitsInMemory(entry.id, entry.weightBytes, options.memoryLimitBytes);
    if (options.onConfig) options.onConfig(model.entry, model.config);

    report(LoadPhase::Map, 0, 1);
    phaseStart = Clock::now();
    model.checkpoint = Checkpoint::open(entry.dir);
    for (const auto& [name, tensor] : model.checkpoint.tensors())
        if (!computedWith(tensor.info->dtype))
            throw Error("unsupported", "tensor '" + name + "' of " + tensor.file->path().string() + " is " +
                                           std::string(dtypeName(tensor.info->dtype)) + ", which no Dragoman model computes with");
    stats.bytes = model.checkpoint.totalBytes();
    stats.mapSeconds = secondsSince(phaseStart);
    report(LoadPhase::Map, 1, 1);

    if (options.pageIn) {
        phaseStart = Clock::now();
        std::vector<std::shared_ptr<const MappedFile>> files;
        for (const auto& file : model.checkpoint.files())
            files.push_back(file->mapping());
        const bool completed = pageIn(files, meter, index(LoadPhase::PageIn));
        if (!completed) throw Cancelled("load stopped while " + meter.phaseName(index(LoadPhase::PageIn)));
        stats.pageInSeconds = secondsSince(phaseStart);
    } else
        meter.skip(index(LoadPhase::PageIn));
    stats.readySeconds = secondsSince(start);
    model.stats = stats;
    log::info(ctx, "loaded {} in {:.3f} s (verify {:.3f}, map {:.3f}, page-in {:.3f}); {} bytes{}", entry.dir.string(), stats.readySeconds,
              stats.verifySeconds, stats.mapSeconds, stats.pageInSeconds, stats.bytes, firstSight ? "; first sight: files hashed" : "");
    return model;
}

}  // namespace dragoman
