#pragma once
// What the application asks of whatever computes translations: the local engine (LocalBackend, below), or an
// OpenAI-compatible server (remote/switching_backend.h). The engine worker holds this interface, so the window does not
// know which one it talks to. Calls come from the engine thread, one at a time.
#include "dragoman.h"

#include <memory>
#include <string>

namespace dragoman {

struct BackendCapabilities {
    bool prompts = false;  // glossary, context, sampling (chat models)
    bool beamSearch = false;
    // Requests worth having in flight at once (a document's segments): a server batches them, a local model shares
    // its decoding steps between them (requestsInFlight()).
    int concurrency = 1;
};

class TranslationBackend {
public:
    virtual ~TranslationBackend() = default;

    // Loads (or connects to) a model; progress and cancel as in dragoman.h. On failure or cancel the model in
    // use stays; on success the new one replaces it. Throws Error or Cancelled.
    virtual ModelDescription load(const std::string& idOrPath, const ProgressCallback& progress, const CancelToken& cancel,
                                  LoadReport* report = nullptr) = 0;
    virtual bool loaded() const = 0;
    // A LoRA adapter bound to the loaded model, for requests to name (TranslationRequest::adapter). Throws Error.
    virtual std::shared_ptr<const LoraSet> loadAdapter(const std::string& idOrPath) = 0;
    // Deltas stream through request.onDelta; request.cancel stops it (the text so far is returned).
    virtual std::string translate(const TranslationRequest& request, TranslationStats* stats = nullptr) = 0;
    virtual BackendCapabilities capabilities() const = 0;
};

// The engine in this process.
class LocalBackend : public TranslationBackend {
public:
    // The device the local engine's models run on: auto, cpu or cuda ($DRAGOMAN_DEVICE overrides).
    explicit LocalBackend(std::string device = "auto") : device_(std::move(device)) {}

    ModelDescription load(const std::string& idOrPath, const ProgressCallback& progress, const CancelToken& cancel,
                          LoadReport* report = nullptr) override;
    bool loaded() const override { return model_ != nullptr; }
    std::shared_ptr<const LoraSet> loadAdapter(const std::string& idOrPath) override;
    std::string translate(const TranslationRequest& request, TranslationStats* stats = nullptr) override;
    BackendCapabilities capabilities() const override;

private:
    std::string device_;
    std::shared_ptr<const Model> model_;
};

}  // namespace dragoman
