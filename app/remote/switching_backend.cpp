#include "remote/switching_backend.h"

#include <QUrl>

#include <atomic>
#include <chrono>
#include <exception>
#include <thread>

namespace dragoman {
namespace {

// `work` on a thread of its own, joined: no event loop of the caller's thread turns meanwhile.
template <typename Work>
auto offThread(Work work) {
    decltype(work()) result{};
    std::exception_ptr error;
    std::thread([&] {
        try {
            result = work();
        } catch (...) {
            error = std::current_exception();
        }
    }).join();
    if (error) std::rethrow_exception(error);
    return result;
}

}  // namespace

ModelDescription SwitchingBackend::load(const std::string& idOrPath, const ProgressCallback& progress, const CancelToken& cancel,
                                        LoadReport* report) {
    const auto id = QString::fromStdString(idOrPath);
    if (!isServerEngineId(id)) {
        auto description = local_.load(idOrPath, progress, cancel, report);
        remote_.reset();
        return description;
    }
    const auto saved = savedServerEngine(id);
    if (!saved) throw Error("model_not_found", "no server named '" + id.mid(7).toStdString() + "' is saved (File › Connect to a server…)");
    const auto start = std::chrono::steady_clock::now();
    if (progress && !progress({"Connecting to " + saved->name.toStdString(), 0, 1, 0.1})) throw Cancelled("connecting was cancelled");
    const auto settings = remoteSettingsOf(*saved);
    struct Connected {
        std::shared_ptr<const RemoteEngine> engine;
        std::vector<std::string> languages;
    };
    const auto connected = offThread([&] {
        auto engine = std::make_shared<const RemoteEngine>(settings, cancel);
        return Connected{engine, engine->targetLanguages(cancel)};
    });
    const auto& engine = connected.engine;
    if (cancel.cancelled()) throw Cancelled("connecting was cancelled");
    ModelDescription description;
    description.id = idOrPath;
    description.architecture = engine->model().toStdString();
    description.device = QUrl::fromUserInput(saved->url).host().toStdString();
    description.translates = true;
    description.prompts = engine->chat();
    description.chat = engine->chat();
    description.targetLanguages = connected.languages;
    description.anySource = true;  // `from: auto` passes the detected language on; the server refuses what it cannot read
    description.promptProfile = engine->chat() ? engine->promptProfile() : std::string();
    description.instructions = description.promptProfile == "hy-mt2";
    if (progress) progress({"Connected", 1, 1, 1.0});
    if (report) *report = {std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 0, 0, false};
    remote_ = engine;
    return description;
}

std::shared_ptr<const LoraSet> SwitchingBackend::loadAdapter(const std::string& idOrPath) {
    if (remote_)
        throw Error("unsupported", "adapters on a server are models of their own there: choose '" + idOrPath +
                                       "' as the server's model (File › Connect to a server…)");
    return local_.loadAdapter(idOrPath);
}

std::string SwitchingBackend::translate(const TranslationRequest& request, TranslationStats* stats) {
    const auto remote = remote_;
    if (!remote) return local_.translate(request, stats);
    // The server reports no token counts while streaming: each delta counts as one, as servers send them.
    const auto start = std::chrono::steady_clock::now();
    std::atomic<std::int64_t> deltas = 0;
    std::atomic<double> first = -1;
    auto counted = request;
    counted.onDelta = [&](std::string_view delta) {
        if (deltas++ == 0) first = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return request.onDelta ? request.onDelta(delta) : true;
    };
    auto text = offThread([&] { return remote->translate(counted); });
    if (stats) {
        stats->generatedTokens = deltas;
        stats->firstTokenSeconds = first;
        stats->totalSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        stats->stopped = request.cancel.cancelled();
    }
    return text;
}

BackendCapabilities SwitchingBackend::capabilities() const {
    const auto remote = remote_;
    if (!remote) return local_.capabilities();
    return {remote->chat(), false, 8};
}

}  // namespace dragoman
