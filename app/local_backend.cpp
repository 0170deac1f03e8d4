#include "translation_backend.h"

namespace dragoman {

ModelDescription LocalBackend::load(const std::string& idOrPath, const ProgressCallback& progress, const CancelToken& cancel,
                                    LoadReport* report) {
    ModelParams params;
    params.device = device_;
    params.progress = progress;
    params.cancel = cancel;
    auto model = Model::load(idOrPath, params);
    if (report) *report = model->loadReport();
    model_ = std::move(model);  // only a complete load replaces the model in use
    return model_->description();
}

std::shared_ptr<const LoraSet> LocalBackend::loadAdapter(const std::string& idOrPath) {
    if (!model_) throw Error("model_not_found", "no model is loaded to apply the adapter to");
    return model_->loadAdapter(idOrPath);
}

std::string LocalBackend::translate(const TranslationRequest& request, TranslationStats* stats) {
    if (!model_) throw Error("model_not_found", "no model is loaded");
    return model_->translate(request, stats);
}

BackendCapabilities LocalBackend::capabilities() const {
    if (!model_) return {};
    const auto& d = model_->description();
    // A document's segments share the model's steps (and a translation model's encoder passes), as on the CLI.
    return {d.prompts, d.beamSearch, requestsInFlight(d, defaultTogether(d))};
}

}  // namespace dragoman
