#include "runtime/runnable_model.h"

#include "models/hunyuan.h"
#include "models/marian.h"
#include "runtime/device.h"
#include "util/error.h"
#include "util/log.h"

#include <torch/cuda.h>

namespace dragoman {

std::string RunnableModel::device() const {
    // Marian runs on the engine's CPU kernels only (its models are small); HY-MT follows choosePlacement().
    if (encoderDecoder && torch::cuda::is_available()) return "CPU (this architecture runs on the CPU kernels)";
    return describePlacement(placement);
}

const Tokenizer& RunnableModel::requireTokenizer() const {
    if (!tokenizer) throw Error("tokenizer", id() + " has no tokenizer files (source.spm / tokenizer.json)");
    return *tokenizer;
}

std::shared_ptr<RunnableModel> openModel(const ModelStore& store, const std::string& idOrPath, const LoadOptions& options) {
    auto model = std::make_shared<RunnableModel>();
    model->loaded = loadModel(store, idOrPath, options);
    const auto& entry = model->loaded.entry;
    const auto label = (entry.dir / "config.json").string();
    model->architecture = model->loaded.config.value("model_type", "");
    if (model->architecture == "marian") {
        model->encoderDecoder =
            std::make_shared<MarianModel>(MarianConfig::parse(model->loaded.config, label), model->loaded.weights, entry.id);
    } else if (model->architecture == "hunyuan_v1_dense") {
        model->placement = choosePlacement();
        model->causal = std::make_shared<HunyuanModel>(HunyuanConfig::parse(model->loaded.config, label), model->loaded.weights, entry.id,
                                                       model->placement);
    } else {
        throw Error("config", label + ": unsupported model_type '" + model->architecture + "' (supported: marian, hunyuan_v1_dense)");
    }
    // A checkpoint without tokenizer files (a synthetic one, for speed tests) still runs on token ids.
    const bool hasTokenizer = std::filesystem::exists(entry.dir / "source.spm") || std::filesystem::exists(entry.dir / "tokenizer.json");
    if (hasTokenizer)
        model->tokenizer = loadTokenizer(entry.dir, model->architecture);
    else
        log::warn({entry.id}, "no tokenizer files: the model runs on token ids only");
    model->generation = GenerationConfig::load(entry.dir);
    log::info({entry.id}, "ready: {} ({} weights) on {}", model->architecture, model->loaded.weights.size(), model->device());
    return model;
}

}  // namespace dragoman
