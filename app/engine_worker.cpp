#include "engine_worker.h"

#include "documents/document_translation.h"
#include "language_choices.h"

#include <QMetaObject>

namespace dragoman {

EngineWorker::EngineWorker(int threads, std::unique_ptr<TranslationBackend> backend) : backend_(std::move(backend)) {
    qRegisterMetaType<ModelInfo>();
    qRegisterMetaType<LoadInfo>();
    qRegisterMetaType<TranslationInfo>();
    thread_.setObjectName(QStringLiteral("dragoman-engine"));
    moveToThread(&thread_);
    thread_.start();
    // Thread pools are sized once, on the engine thread, before any inference.
    post([threads] { initEngine({threads}); });
}

EngineWorker::~EngineWorker() {
    closing_ = true;
    {
        std::lock_guard lock(mutex_);
        latest_ = std::numeric_limits<quint64>::max();  // nothing more is delivered
        running_.cancel();
        loadCancel_.cancel();
        documentCancel_.cancel();
    }
    thread_.quit();
    thread_.wait();
}

void EngineWorker::post(std::function<void()> job) {
    {
        std::lock_guard lock(mutex_);
        posted_.push_back(std::move(job));
    }
    // By name: Qt builds the event itself, so nothing of the job crosses threads outside the mutex.
    QMetaObject::invokeMethod(this, "runPosted", Qt::QueuedConnection);
}

void EngineWorker::runPosted() {
    std::function<void()> job;
    {
        std::lock_guard lock(mutex_);
        if (posted_.empty()) return;
        job = std::move(posted_.front());
        posted_.pop_front();
    }
    job();
}

void EngineWorker::requestLoad(const QString& modelIdOrPath) {
    const quint64 id = ++latestLoad_;
    {
        std::lock_guard lock(mutex_);
        loadCancel_.cancel();  // a load still running was superseded
    }
    post([this, id, modelIdOrPath] { runLoad(id, modelIdOrPath); });
}

void EngineWorker::cancelLoad() {
    std::lock_guard lock(mutex_);
    loadCancel_.cancel();
}

quint64 EngineWorker::requestTranslation(const QString& text, const QString& from, const QString& to) {
    quint64 id;
    {
        std::lock_guard lock(mutex_);
        id = latest_.load() + 1;
        latest_ = id;
        running_.cancel();  // the running request stops at its next step
        mailbox_ = Pending{id, text, from, to};
    }
    post([this] { runNextTranslation(); });
    return id;
}

void EngineWorker::cancel(quint64 requestId) {
    std::lock_guard lock(mutex_);
    if (runningId_ == requestId) running_.cancel();
    if (mailbox_ && mailbox_->id == requestId) mailbox_.reset();
}

void EngineWorker::setInstructions(const QString& style, const QStringList& preferences) {
    std::lock_guard lock(mutex_);
    style_ = style.trimmed();
    preferences_.clear();
    for (const auto& p : preferences)
        if (!p.trimmed().isEmpty()) preferences_ << p.trimmed();
}

void EngineWorker::setPromptProfile(const QString& profile) {
    std::lock_guard lock(mutex_);
    profileOverride_ = profile;
}

void EngineWorker::applyInstructions(TranslationRequest& request) {
    if (modelProfile_.isEmpty()) return;  // a model without prompts
    std::lock_guard lock(mutex_);
    request.promptProfile = profileOverride_.toStdString();
    if ((profileOverride_.isEmpty() ? modelProfile_ : profileOverride_) != QLatin1String("hy-mt2")) return;
    if (preferences_.isEmpty()) {
        request.style = style_.toStdString();
        return;
    }
    if (!style_.isEmpty()) request.preferences.push_back("The translation style must strictly conform to [" + style_.toStdString() + "].");
    for (const auto& p : preferences_)
        request.preferences.push_back(p.toStdString());
}

void EngineWorker::requestAdapter(const QString& adapterIdOrPath) {
    post([this, adapterIdOrPath] { runAdapter(adapterIdOrPath); });
}

void EngineWorker::runAdapter(const QString& adapterIdOrPath) {
    if (adapterIdOrPath.isEmpty()) {
        adapter_.reset();
        Q_EMIT adapterChanged({});
        return;
    }
    try {
        auto& resident = adapters_[adapterIdOrPath];
        if (!resident) resident = backend_->loadAdapter(adapterIdOrPath.toStdString());
        adapter_ = resident;
        Q_EMIT adapterChanged(adapterIdOrPath);
    } catch (const std::exception& e) {
        adapters_.erase(adapterIdOrPath);
        Q_EMIT adapterFailed(adapterIdOrPath, QString::fromUtf8(e.what()));
    }
}

quint64 EngineWorker::requestDocument(const QString& path, const QString& from, const QString& to) {
    const quint64 id = ++documents_;
    post([this, id, path, from, to] { runDocument(id, path, from, to); });
    return id;
}

void EngineWorker::cancelDocument() {
    cancelledUpTo_ = documents_.load();
    std::lock_guard lock(mutex_);
    documentCancel_.cancel();  // a server's requests in flight close their connections at once
}

void EngineWorker::runDocument(quint64 jobId, const QString& path, const QString& from, const QString& to) {
    auto stopped = [this, jobId] { return jobId <= cancelledUpTo_.load() || closing_.load(); };
    CancelToken cancel;
    {
        std::lock_guard lock(mutex_);
        documentCancel_ = cancel;
    }
    if (stopped()) cancel.cancel();
    if (!backend_->loaded()) {
        Q_EMIT documentFailed(jobId, tr("No model is loaded."));
        return;
    }
    try {
        documents::DocumentRequest request;
        request.input = path;
        request.to = to.toStdString();
        // Segments in flight decode together: a server batches them, and the local engine's batcher shares its steps
        // (and a translation model's encoder passes) between them.
        request.parallel = backend_->capabilities().concurrency;
        // "auto": each passage as it is written (a quotation in another language included); one the model cannot
        // read goes as the model's source rather than failing the whole document.
        auto sourceOf = [&](const std::string& text) {
            return from == kDetectLanguage ? sourceLanguageFor(text, model_).from : from.toStdString();
        };
        request.translate = [&](const std::string& text) {
            TranslationRequest job{text, sourceOf(text), request.to, 1, 0, {}};
            job.adapter = adapter_;
            applyInstructions(job);
            job.onDelta = [&](std::string_view) { return !stopped(); };
            job.cancel = cancel;
            auto out = backend_->translate(job);
            if (stopped()) throw Cancelled("document translation stopped");
            return out;
        };
        // Data documents go whole with the structured prompt, which carries no other instruction.
        TranslationRequest sample;
        applyInstructions(sample);
        if (documents::takesStructuredPrompt(modelProfile_.toStdString(), sample))
            request.translateStructured = [&](const std::string& text, const std::string& format) {
                TranslationRequest whole{text, sourceOf(text), request.to, 1, 0, {}};
                whole.adapter = adapter_;
                whole.structuredFormat = format;
                whole.promptProfile = sample.promptProfile;
                whole.onDelta = [&](std::string_view) { return !stopped(); };
                whole.cancel = cancel;
                auto out = backend_->translate(whole);
                if (stopped()) throw Cancelled("document translation stopped");
                return out;
            };
        // Segments with inline markup go whole with HY-MT's formatted-text prompt, which keeps their tags.
        if (documents::takesFormattedPrompt(backend_->capabilities().prompts, sample))
            request.translateFormatted = [&](const std::string& tagged) {
                TranslationRequest segment{tagged, sourceOf(tagged), request.to, 1, 0, {}};
                segment.adapter = adapter_;
                segment.formatted = true;
                segment.promptProfile = sample.promptProfile;
                segment.onDelta = [&](std::string_view) { return !stopped(); };
                segment.cancel = cancel;
                auto out = backend_->translate(segment);
                if (stopped()) throw Cancelled("document translation stopped");
                return out;
            };
        request.progress = [this, jobId](std::size_t done, std::size_t total) {
            Q_EMIT documentProgress(jobId, static_cast<int>(done), static_cast<int>(total));
        };
        const auto result = documents::translateDocument(request);
        Q_EMIT documentFinished(jobId, result.output, static_cast<int>(result.keptSource + result.keptAsIs.size()));
    } catch (const Cancelled&) {
        Q_EMIT documentFailed(jobId, tr("Stopped; nothing was written."));
    } catch (const std::exception& e) {
        Q_EMIT documentFailed(jobId, QString::fromUtf8(e.what()));
    }
}

void EngineWorker::runLoad(quint64 loadId, const QString& modelIdOrPath) {
    if (loadId != latestLoad_.load() || closing_) return;  // superseded before it started
    CancelToken cancel;
    {
        std::lock_guard lock(mutex_);
        loadCancel_ = cancel;
    }
    try {
        auto progress = [this, loadId](const ProgressReport& r) {
            if (loadId != latestLoad_.load()) return false;
            Q_EMIT loadProgress(QString::fromUtf8(r.phase.data(), static_cast<int>(r.phase.size())), r.overall);
            return true;
        };
        LoadReport report;
        const auto model = backend_->load(modelIdOrPath.toStdString(), progress, cancel, &report);
        // Superseded after its last report: the newer load, queued behind, replaces it and is the one reported.
        if (loadId != latestLoad_.load()) return;
        // Adapters are bound to the model they were loaded for.
        adapters_.clear();
        adapter_.reset();
        modelProfile_ = QString::fromStdString(model.promptProfile);
        model_ = model;
        {
            // The last model's instructions are not this one's: the controller sends its own once it hears of it.
            std::lock_guard lock(mutex_);
            profileOverride_.clear();
            style_.clear();
            preferences_.clear();
        }
        ModelInfo info{QString::fromStdString(model.id),
                       QString::fromStdString(model.architecture),
                       QString::fromStdString(model.device),
                       {},
                       QString::fromStdString(model.fixedFrom),
                       QString::fromStdString(model.fixedTo),
                       model.instructions,
                       QString::fromStdString(model.promptProfile)};
        for (const auto& code : model.targetLanguages)
            info.targetLanguages << QString::fromStdString(code);
        Q_EMIT loaded(info, LoadInfo{report.readySeconds, report.bytes, report.copies});
    } catch (const Cancelled&) {
        if (loadId == latestLoad_.load()) Q_EMIT loadFailed(tr("Loading was cancelled."));
    } catch (const std::exception& e) {
        if (loadId == latestLoad_.load()) Q_EMIT loadFailed(QString::fromUtf8(e.what()));
    }
}

void EngineWorker::runNextTranslation() {
    std::optional<Pending> request;
    CancelToken cancel;
    {
        std::lock_guard lock(mutex_);
        request.swap(mailbox_);
        if (!request || request->id != latest_.load()) return;  // superseded or stopped before it started
        running_ = cancel;
        runningId_ = request->id;
    }
    const quint64 id = request->id;
    if (!backend_->loaded()) {
        Q_EMIT failed(id, tr("No model is loaded."));
        return;
    }
    try {
        TranslationRequest job{request->text.toStdString(), request->from.toStdString(), request->to.toStdString(), 1, id, {}};
        if (request->from == kDetectLanguage) {
            const auto guess = sourceLanguageFor(job.text, model_);
            Q_EMIT sourceDetected(id, QString::fromStdString(guess.detected), guess.reliable, QString::fromStdString(guess.from));
            if (guess.unreadable) {
                auto reason = QString::fromStdString(guess.reason);
                reason[0] = reason[0].toUpper();
                Q_EMIT failed(id, tr("%1. Choose the source language by hand to translate it anyway.").arg(reason));
                return;
            }
            job.from = guess.from;
        }
        job.cancel = cancel;
        job.adapter = adapter_;
        applyInstructions(job);
        job.onDelta = [this, id](std::string_view delta) {
            if (latest_.load() != id) return false;  // superseded: drop it
            Q_EMIT tokenReady(id, QString::fromUtf8(delta.data(), static_cast<int>(delta.size())));
            return true;
        };
        TranslationStats stats;
        const auto text = backend_->translate(job, &stats);
        if (latest_.load() != id) return;  // superseded: its result is never delivered
        Q_EMIT finished(id, TranslationInfo{QString::fromStdString(text), stats.sourceTokens, stats.generatedTokens,
                                            stats.firstTokenSeconds, stats.totalSeconds, stats.stopped});
    } catch (const std::exception& e) {
        if (latest_.load() == id) Q_EMIT failed(id, QString::fromUtf8(e.what()));
    }
}

}  // namespace dragoman
