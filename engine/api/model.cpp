// dragoman.h's Model: a RunnableModel and its Translator behind the public API.
#include "dragoman.h"

#include "adapters/lora_adapter.h"
#include "runtime/device.h"
#include "runtime/runnable_model.h"
#include "runtime/translator.h"
#include "store/model_store.h"

#include <torch/torch.h>

namespace dragoman {

struct Model::Impl {
    std::shared_ptr<const RunnableModel> model;
    std::unique_ptr<Translator> translator;  // null for a checkpoint without tokenizer files
};

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
    const auto& m = *impl_->model;
    description_.id = m.id();
    description_.architecture = m.architecture;
    description_.device = m.device();
    description_.translates = impl_->translator != nullptr;
    if (impl_->translator) {
        description_.targetLanguages = impl_->translator->targetLanguages();
        std::tie(description_.fixedFrom, description_.fixedTo) = impl_->translator->fixedPair();
        description_.prompts = impl_->translator->strategy().takesPrompts();
        description_.beamSearch = impl_->translator->strategy().supportsBeamSearch();
    }
    const auto& s = m.loaded.stats;
    report_ = {s.readySeconds, s.bytes, s.copies, s.hashedOnLoad};
}

Model::~Model() = default;

std::shared_ptr<const Model> Model::load(const std::string& idOrPath, const ModelParams& params) {
    OpenOptions options;
    options.load.progress = params.progress;
    options.load.cancel = params.cancel;
    options.load.pageIn = params.pageIn;
    options.load.memoryLimitBytes = params.memoryLimitBytes;
    options.device = deviceOverride(params.device);
    const ModelStore store;
    auto impl = std::make_unique<Impl>();
    impl->model = openModel(store, idOrPath, options);
    if (impl->model->strategy) impl->translator = std::make_unique<Translator>(impl->model);
    return std::make_shared<const Model>(std::move(impl));
}

std::string Model::translate(const TranslationRequest& request, TranslationStats* stats) const {
    if (!impl_->translator) impl_->model->requireStrategy();  // throws the reason
    return impl_->translator->translate(request, stats);
}

std::shared_ptr<const LoraSet> Model::loadAdapter(const std::string& idOrPath, AdapterLoadReport* report) const {
    const std::filesystem::path dir = findAdapter(idOrPath);
    AdapterLoadStats stats;
    auto adapter = impl_->model->loadAdapter(dir, dir.filename().string(), &stats);
    if (report) *report = {stats.seconds, stats.bytes, stats.copies, stats.modules};
    return adapter;
}

std::vector<std::int64_t> Model::tokenize(std::string_view text) const {
    return impl_->model->requireTokenizer().encode(text);
}

std::string Model::detokenize(const std::vector<std::int64_t>& ids, bool keepSpecial) const {
    return impl_->model->requireTokenizer().decode(ids, !keepSpecial);
}

}  // namespace dragoman
