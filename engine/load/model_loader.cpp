#include "load/model_loader.h"

#include "load/memory_guard.h"
#include "load/page_in.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/log.h"
#include "util/stopwatch.h"
#include "util/text.h"

#include <chrono>
#include <fstream>

namespace dragoman {
namespace {

using Clock = SteadyClock;

// Wraps the user's callback: reports, and turns "stop" into Cancelled.
class Reporter {
public:
    explicit Reporter(const LoadProgress& progress) : progress_(progress) {}
    void operator()(LoadPhase phase, double fraction) const {
        if (progress_ && !progress_(phase, fraction))
            throw Cancelled(std::string("load cancelled during ") + std::string(phaseName(phase)));
    }
    bool keepGoing(LoadPhase phase, double fraction) const { return !progress_ || progress_(phase, fraction); }

private:
    const LoadProgress& progress_;
};

}  // namespace

std::string_view phaseName(LoadPhase phase) {
    switch (phase) {
        case LoadPhase::Resolve:
            return "resolve";
        case LoadPhase::Verify:
            return "verify";
        case LoadPhase::Map:
            return "map";
        case LoadPhase::Build:
            return "build";
        case LoadPhase::PageIn:
            return "page-in";
    }
    return "load";
}

LoadedModel loadModel(const ModelStore& store, const std::string& idOrPath, const LoadOptions& options) {
    const auto start = Clock::now();
    const Reporter report(options.progress);
    LoadStats stats;

    report(LoadPhase::Resolve, 0.0);
    auto phaseStart = Clock::now();
    ModelEntry entry = store.resolve(idOrPath);
    stats.resolveSeconds = secondsSince(phaseStart);
    report(LoadPhase::Resolve, 1.0);
    const log::Ctx ctx{entry.id};

    // Integrity: hashed once (first sight), afterwards only stat.
    report(LoadPhase::Verify, 0.0);
    phaseStart = Clock::now();
    const bool firstSight = !std::filesystem::exists(store.manifestPath(entry));
    const auto manifest = store.ensureManifest(entry, [&](std::uint64_t done, std::uint64_t total) {
        return report.keepGoing(LoadPhase::Verify, total ? 0.99 * double(done) / double(total) : 0.0);
    });
    if (auto problems = statMismatches(manifest); !problems.empty()) {
        throw Error("integrity", entry.id + ": " + joinProblems(problems) + ". Run 'dragoman-cli models verify " + entry.id +
                                     " --full' to re-check, or re-import the model");
    }
    stats.hashedOnLoad = firstSight;
    stats.verifySeconds = secondsSince(phaseStart);
    report(LoadPhase::Verify, 1.0);

    LoadedModel model{entry, readJsonObject(entry.dir / "config.json", "config"), {}, {}, {}};
    stats.bytes = entry.weightBytes;
    checkFitsInMemory(entry.id, entry.weightBytes, options.memoryLimitBytes);

    report(LoadPhase::Map, 0.0);
    phaseStart = Clock::now();
    model.checkpoint = Checkpoint::open(entry.dir);
    stats.bytes = model.checkpoint.totalBytes();
    stats.mapSeconds = secondsSince(phaseStart);
    report(LoadPhase::Map, 1.0);

    report(LoadPhase::Build, 0.0);
    phaseStart = Clock::now();
    CopyCounter copies;
    const double count = std::max<std::size_t>(1, model.checkpoint.tensors().size());
    std::size_t built = 0;
    for (const auto& [name, tensor] : model.checkpoint.tensors()) {
        model.weights.emplace(name, mappedTensor(tensor.file, *tensor.info, &copies));
        if (++built % 64 == 0) report(LoadPhase::Build, built / count);
    }
    stats.copies = copies.tensors.load();
    stats.copiedBytes = copies.bytes.load();
    stats.buildSeconds = secondsSince(phaseStart);
    report(LoadPhase::Build, 1.0);

    if (options.pageIn) {
        phaseStart = Clock::now();
        std::vector<std::shared_ptr<const MappedFile>> files;
        for (const auto& file : model.checkpoint.files())
            files.push_back(file->mapping());
        const bool completed = pageIn(files, [&](std::uint64_t done, std::uint64_t total) {
            return report.keepGoing(LoadPhase::PageIn, total ? double(done) / double(total) : 1.0);
        });
        if (!completed) throw Cancelled("load cancelled during page-in");
        stats.pageInSeconds = secondsSince(phaseStart);
    }
    stats.readySeconds = secondsSince(start);
    model.stats = stats;
    log::info(ctx, "loaded {} in {:.3f} s (verify {:.3f}, map {:.3f}, build {:.3f}, page-in {:.3f}); {} bytes, {} copies{}",
              entry.dir.string(), stats.readySeconds, stats.verifySeconds, stats.mapSeconds, stats.buildSeconds, stats.pageInSeconds,
              stats.bytes, stats.copies, firstSight ? "; first sight: files hashed" : "");
    return model;
}

}  // namespace dragoman
