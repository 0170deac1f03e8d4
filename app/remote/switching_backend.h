#pragma once
// The window's backend: the local engine, or a server saved in the settings (remote/server_engines.h), chosen
// by what is loaded: "server:NAME" connects to that server (its model list read, nothing loaded here), anything
// else is a local model. The one in use stays until another has loaded or connected.
//
// Server calls run on a thread of their own that the caller joins: RemoteEngine spins a Qt event loop for
// each request, and spun on the engine thread that loop would deliver the worker's queued calls (a load, the
// next translation) in the middle of this one.
#include "remote/remote_engine.h"
#include "remote/server_engines.h"
#include "translation_backend.h"

#include <memory>

namespace dragoman {

class SwitchingBackend : public TranslationBackend {
public:
    explicit SwitchingBackend(std::string device = "auto") : local_(std::move(device)) {}

    ModelDescription load(const std::string& idOrPath, const ProgressCallback& progress, const CancelToken& cancel,
                          LoadReport* report = nullptr) override;
    bool loaded() const override { return remote_ || local_.loaded(); }
    // A server's adapters are models of their own there: choose one as the server's model.
    std::shared_ptr<const LoraSet> loadAdapter(const std::string& idOrPath) override;
    // From several threads at once for a server (a document's segments in flight).
    std::string translate(const TranslationRequest& request, TranslationStats* stats = nullptr) override;
    BackendCapabilities capabilities() const override;

private:
    LocalBackend local_;
    // Set while a server is in use; each translation holds its own reference, so a load replacing it never
    // frees the one a request is still using.
    std::shared_ptr<const RemoteEngine> remote_;
};

}  // namespace dragoman
