// dragoman-train: trains the default model with the engine's own Marian layers (MarianModel::forwardBatch),
// so what is trained is exactly what is served. Resumable: a checkpoint with the optimizer state is written
// every few hundred steps and on SIGINT/SIGTERM; a rerun with the same --work continues from it.
#include "training_data.h"
#include "training_state.h"

#include "util/error.h"
#include "util/json_file.h"

#include <QCommandLineParser>
#include <QCoreApplication>

#include <dlfcn.h>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>

using namespace dragoman;
using namespace dragoman::train;
namespace F = torch::nn::functional;

namespace {

std::atomic<bool> stopRequested{false};

void requestStop(int) {
    stopRequested = true;
}

struct Options {
    std::filesystem::path layout, trainFile, validFile, work;
    std::int64_t epochs = 30, batchTokens = 4000, warmup = 1000, saveEvery = 200, logEvery = 50, maxTokens = 128;
    double learningRate = 7e-4, dropout = 0.1, labelSmoothing = 0.1;
    int threads = 2;
    std::uint64_t seed = 1;
};

Options parseOptions(const QCoreApplication& app) {
    QCommandLineParser parser;
    parser.setApplicationDescription("Trains a Marian model for Dragoman from prepared parallel data (see tools/train/README.md).");
    parser.addHelpOption();
    const QList<QCommandLineOption> options{
        {"layout", "Model folder with config.json and the tokenizer; model.safetensors is exported into it.", "DIR"},
        {"train", "Training examples (TARGET_LANG<TAB>SOURCE<TAB>TARGET).", "FILE"},
        {"valid", "Validation examples, same format.", "FILE"},
        {"work", "Folder for the resumable checkpoint.", "DIR"},
        {"epochs", "Total epochs to reach.", "N", "30"},
        {"batch-tokens", "Padded target tokens per batch.", "N", "4000"},
        {"lr", "Peak learning rate.", "LR", "0.0007"},
        {"warmup", "Linear warm-up steps, then inverse square-root decay.", "N", "1000"},
        {"dropout", "Dropout.", "P", "0.1"},
        {"label-smoothing", "Label smoothing.", "E", "0.1"},
        {"threads", "Compute threads.", "N", "2"},
        {"save-every", "Steps between checkpoints.", "N", "200"},
        {"seed", "Random seed.", "S", "1"},
        {"log-every", "Steps between progress lines.", "N", "50"},
    };
    parser.addOptions(options);
    parser.process(app);
    for (const char* required : {"layout", "train", "valid", "work"})
        if (!parser.isSet(required)) throw Error("usage", std::string("--") + required + " is required");
    Options o;
    o.layout = parser.value("layout").toStdString();
    o.trainFile = parser.value("train").toStdString();
    o.validFile = parser.value("valid").toStdString();
    o.work = parser.value("work").toStdString();
    o.epochs = parser.value("epochs").toLongLong();
    o.batchTokens = parser.value("batch-tokens").toLongLong();
    o.learningRate = parser.value("lr").toDouble();
    o.warmup = std::max<std::int64_t>(1, parser.value("warmup").toLongLong());
    o.dropout = parser.value("dropout").toDouble();
    o.labelSmoothing = parser.value("label-smoothing").toDouble();
    o.threads = std::max(1, parser.value("threads").toInt());
    o.saveEvery = std::max<std::int64_t>(1, parser.value("save-every").toLongLong());
    o.seed = parser.value("seed").toULongLong();
    o.logEvery = std::max<std::int64_t>(1, parser.value("log-every").toLongLong());
    return o;
}

// OpenBLAS (the products) and ATen's OpenMP pool (everything else) each spin while waiting; on 2 cores
// giving both pools every core made them take turns. $DRAGOMAN_ATEN_THREADS / $DRAGOMAN_BLAS_THREADS override.
void setThreads(int threads) {
    auto fromEnv = [](const char* name, int fallback) {
        const char* value = std::getenv(name);
        return value && *value ? std::max(1, std::atoi(value)) : fallback;
    };
    torch::set_num_threads(fromEnv("DRAGOMAN_ATEN_THREADS", threads));
    using SetThreads = void (*)(int);
    if (auto set = reinterpret_cast<SetThreads>(::dlsym(RTLD_DEFAULT, "openblas_set_num_threads")))
        set(fromEnv("DRAGOMAN_BLAS_THREADS", threads));
}

double learningRate(const Options& o, std::int64_t step) {
    const double s = static_cast<double>(std::max<std::int64_t>(step, 1)), w = static_cast<double>(o.warmup);
    return o.learningRate * std::min(s / w, std::sqrt(w / s));
}

// Mean per-token cross-entropy (no smoothing, no dropout) over the validation set.
double validationLoss(const MarianModel& model, const std::vector<Example>& examples, std::int64_t batchTokens) {
    torch::NoGradGuard noGrad;
    double total = 0;
    std::int64_t tokens = 0;
    for (const auto& batch : makeBatches(examples, static_cast<std::size_t>(batchTokens), 0)) {
        const auto t = toTensors(examples, batch, model.padId(), model.decoderStartId());
        const auto logits = model.forwardBatch(t.source, t.sourceValid, t.targetIn);
        total += F::cross_entropy(logits.view({-1, model.vocabSize()}), t.targetOut.view(-1),
                                  F::CrossEntropyFuncOptions().ignore_index(model.padId()).reduction(torch::kSum))
                     .item<double>();
        tokens += t.targetTokens;
    }
    return total / static_cast<double>(std::max<std::int64_t>(tokens, 1));
}

int runTraining(const Options& o) {
    setThreads(o.threads);
    std::filesystem::create_directories(o.work);
    const auto config = MarianConfig::parse(readJsonObject(o.layout / "config.json", "config"), "config.json");
    const MarianTokenizer tokenizer(o.layout);
    const auto trainSet = loadExamples(o.trainFile, tokenizer, static_cast<std::size_t>(o.maxTokens));
    const auto validSet = loadExamples(o.validFile, tokenizer, static_cast<std::size_t>(o.maxTokens));
    std::printf("examples: %zu training, %zu validation\n", trainSet.size(), validSet.size());

    TrainingState state(config, o.seed, o.learningRate);
    const auto checkpoint = o.work / "checkpoint.pt";
    if (std::filesystem::exists(checkpoint)) {
        state.load(checkpoint);
        std::printf("resumed at step %lld (epoch %lld, batch %lld)\n", static_cast<long long>(state.progress().step),
                    static_cast<long long>(state.progress().epoch), static_cast<long long>(state.progress().batchInEpoch));
    }
    const MarianModel model(config, state.weights(), "training");
    std::vector<torch::Tensor> parameters;
    for (auto& group : state.optimizer().param_groups())
        for (auto& p : group.params())
            parameters.push_back(p);

    auto& progress = state.progress();
    double windowLoss = 0;
    std::int64_t windowTokens = 0;
    auto windowStart = std::chrono::steady_clock::now();
    while (progress.epoch < o.epochs) {
        const auto batches =
            makeBatches(trainSet, static_cast<std::size_t>(o.batchTokens), o.seed * 1000003 + static_cast<std::uint64_t>(progress.epoch));
        for (; progress.batchInEpoch < static_cast<std::int64_t>(batches.size()); ++progress.batchInEpoch) {
            if (stopRequested) {
                state.save(checkpoint);
                std::printf("stopped; checkpoint at step %lld\n", static_cast<long long>(progress.step));
                return 0;
            }
            const auto t =
                toTensors(trainSet, batches[static_cast<std::size_t>(progress.batchInEpoch)], model.padId(), model.decoderStartId());
            state.setLearningRate(learningRate(o, progress.step + 1));
            const auto logits = model.forwardBatch(t.source, t.sourceValid, t.targetIn, o.dropout);
            const auto loss = F::cross_entropy(
                logits.view({-1, model.vocabSize()}), t.targetOut.view(-1),
                F::CrossEntropyFuncOptions().ignore_index(model.padId()).label_smoothing(o.labelSmoothing).reduction(torch::kSum));
            state.optimizer().zero_grad();
            (loss / static_cast<double>(t.targetTokens)).backward();
            torch::nn::utils::clip_grad_norm_(parameters, 1.0);
            state.optimizer().step();
            ++progress.step;
            windowLoss += loss.item<double>();
            windowTokens += t.targetTokens;
            if (progress.step % o.logEvery == 0) {
                const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - windowStart).count();
                std::printf("epoch %lld step %lld  loss %.4f  lr %.2e  %.0f target tokens/s\n", static_cast<long long>(progress.epoch),
                            static_cast<long long>(progress.step), windowLoss / static_cast<double>(windowTokens),
                            learningRate(o, progress.step), static_cast<double>(windowTokens) / seconds);
                std::fflush(stdout);
                windowLoss = 0;
                windowTokens = 0;
                windowStart = std::chrono::steady_clock::now();
            }
            if (progress.step % o.saveEvery == 0) state.save(checkpoint);
        }
        ++progress.epoch;
        progress.batchInEpoch = 0;
        const double valid = validationLoss(model, validSet, o.batchTokens);
        state.exportSafetensors(o.layout / "model.safetensors");
        state.save(checkpoint);
        std::printf("epoch %lld done at step %lld: validation loss %.4f (perplexity %.2f); exported %s\n",
                    static_cast<long long>(progress.epoch), static_cast<long long>(progress.step), valid, std::exp(valid),
                    (o.layout / "model.safetensors").c_str());
        std::fflush(stdout);
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);
    try {
        return runTraining(parseOptions(app));
    } catch (const Error& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return e.category() == "usage" ? 2 : 1;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
}
