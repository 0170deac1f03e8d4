#include "runtime/runnable_model.h"

#include "models/quantization_config.h"
#include "runtime/architectures.h"
#include "runtime/device.h"
#include "runtime/torch_backend.h"
#include "util/error.h"
#include "util/log.h"
#include "util/stopwatch.h"

#include <chrono>
#include <future>

namespace dragoman {

const Seq2SeqModel* RunnableModel::seq2seq() const {
    return network.seq2seq.get();
}

const EncoderDecoderModel* RunnableModel::encoderDecoder() const {
    return network.encoderDecoder.get();
}

const CausalLanguageModel* RunnableModel::causal() const {
    return network.causal.get();
}

std::string RunnableModel::device() const {
    if (placement.onCpuKernels() && cudaDeviceAvailable() && !architectureFor(architecture, id()).followsDevice)
        return "CPU (this architecture runs on the CPU kernels)";
    return describePlacement(placement);
}

const Tokenizer& RunnableModel::requireTokenizer() const {
    if (!tokenizer) throw Error("tokenizer", id() + " has no tokenizer files (source.spm / tokenizer.json)");
    return *tokenizer;
}

std::shared_ptr<const LoraSet> RunnableModel::loadAdapter(const std::filesystem::path& dir, const std::string& name,
                                                          AdapterLoadStats* stats) const {
    return torchBackend().loadLoraAdapter(dir, name, linears(), placement, stats);
}

const TranslationStrategy& RunnableModel::requireStrategy() const {
    requireTokenizer();
    if (!strategy) throw Error("config", id() + ": this model cannot translate");
    return *strategy;
}

std::shared_ptr<RunnableModel> openModel(const ModelStore& store, const std::string& idOrPath, const OpenOptions& options) {
    auto model = std::make_shared<RunnableModel>();
    ProgressMeter meter(options.load.progress, options.load.cancel, loadPhases());
    // The tokenizer is read on a thread of its own while the weights are mapped and paged in: both sit between
    // the start and the first token (a 120k-token tokenizer.json takes 20-80 ms, paging in a warm 1.8 GB file
    // 20-60 ms). Joined below; if the load throws, the future's destructor waits for the thread.
    std::future<std::unique_ptr<Tokenizer>> tokenizerLoad;
    auto load = options.load;
    load.onConfig = [&tokenizerLoad, outer = options.load.onConfig](const ModelEntry& entry, const nlohmann::json& config) {
        if (outer) outer(entry, config);
        const auto& architecture = architectureFor(config.value("model_type", ""), (entry.dir / "config.json").string());
        if (architecture.hasTokenizer(entry.dir))
            tokenizerLoad = std::async(std::launch::async, [&architecture, dir = entry.dir] { return architecture.tokenizer(dir); });
    };
    model->loaded = loadModel(store, idOrPath, load, &meter);
    const auto& entry = model->loaded.entry;
    const auto label = (entry.dir / "config.json").string();
    model->architecture = model->loaded.config.value("model_type", "");
    const auto& architecture = architectureFor(model->architecture, label);
    checkQuantizedTensors(checkQuantizationConfig(model->loaded.config, label), model->loaded.checkpoint, label);
    if (architecture.followsDevice || options.device == "libtorch") model->placement = choosePlacement(options.device);
    const auto network = index(LoadPhase::Network), tokenizer = index(LoadPhase::Tokenizer);
    // Copying to a device moves every byte once more.
    if (!model->placement.onCpu()) meter.setWeight(network, static_cast<double>(model->loaded.stats.bytes) / 5.0e9);
    meter.report(network, 0, 1);
    const auto buildStart = SteadyClock::now();
    CopyCounter copies;
    model->network = architecture.build({model->loaded.config, model->loaded.checkpoint, entry.id, label, model->placement, copies});
    auto& stats = model->loaded.stats;
    stats.buildSeconds = secondsSince(buildStart);
    stats.readySeconds += stats.buildSeconds;
    stats.copies = copies.tensors.load();
    stats.copiedBytes = copies.bytes.load();
    meter.report(network, 1, 1);
    // A checkpoint without tokenizer files (a synthetic one, for speed tests) still runs on token ids.
    meter.report(tokenizer, 0, 1);
    // Work the network can do ahead of its first request fills the wait for the tokenizer, if there is one.
    if (tokenizerLoad.valid() && model->network.seq2seq)
        while (tokenizerLoad.wait_for(std::chrono::seconds(0)) != std::future_status::ready && model->network.seq2seq->prepareAhead()) {
        }
    if (tokenizerLoad.valid())
        model->tokenizer = tokenizerLoad.get();
    else
        log::warn({entry.id}, "no tokenizer files: the model runs on token ids only");
    model->generation = GenerationConfig::load(entry.dir);
    if (model->tokenizer) model->strategy = architecture.strategy(*model);
    meter.report(tokenizer, 1, 1);
    log::info({entry.id}, "ready: {} ({} tensors, built in {:.3f} s, {} copied) on {}", model->architecture,
              model->loaded.checkpoint.tensors().size(), stats.buildSeconds, stats.copies, model->device());
    return model;
}

}  // namespace dragoman
