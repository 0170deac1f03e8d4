#include "engine_worker.h"

#include "documents/document_translation.h"

#include "runtime/runnable_model.h"
#include "runtime/threads.h"
#include "runtime/translator.h"
#include "util/error.h"
#include "util/log.h"

#include <QMetaObject>

namespace dragoman {

EngineWorker::EngineWorker(int threads) {
    qRegisterMetaType<ModelInfo>();
    qRegisterMetaType<LoadInfo>();
    qRegisterMetaType<TranslationInfo>();
    thread_.setObjectName(QStringLiteral("dragoman-engine"));
    moveToThread(&thread_);
    thread_.start();
    // Thread pools are sized once, on the engine thread, before any inference.
    QMetaObject::invokeMethod(
        this, [threads] { configureThreads(threads); }, Qt::QueuedConnection);
}

EngineWorker::~EngineWorker() {
    latest_ = std::numeric_limits<quint64>::max();  // stops a running translation at its next token
    cancelLoad_ = true;
    thread_.quit();
    thread_.wait();
}

void EngineWorker::requestLoad(const QString& modelIdOrPath) {
    cancelLoad_ = false;
    QMetaObject::invokeMethod(
        this, [this, modelIdOrPath] { runLoad(modelIdOrPath); }, Qt::QueuedConnection);
}

void EngineWorker::cancelLoad() {
    cancelLoad_ = true;
}

quint64 EngineWorker::requestTranslation(const QString& text, const QString& from, const QString& to) {
    quint64 id;
    {
        std::lock_guard lock(mutex_);
        id = latest_.load() + 1;
        latest_ = id;  // the running request sees this at its next token and stops
        mailbox_ = Pending{id, text, from, to};
    }
    QMetaObject::invokeMethod(
        this, [this] { runNextTranslation(); }, Qt::QueuedConnection);
    return id;
}

void EngineWorker::cancel(quint64 requestId) {
    cancelled_ = requestId;
}

quint64 EngineWorker::requestDocument(const QString& path, const QString& from, const QString& to) {
    const quint64 id = ++documents_;
    QMetaObject::invokeMethod(
        this, [this, id, path, from, to] { runDocument(id, path, from, to); }, Qt::QueuedConnection);
    return id;
}

void EngineWorker::cancelDocument() {
    cancelledUpTo_ = documents_.load();
}

void EngineWorker::runDocument(quint64 jobId, const QString& path, const QString& from, const QString& to) {
    auto stopped = [this, jobId] { return jobId <= cancelledUpTo_.load() || latest_.load() == std::numeric_limits<quint64>::max(); };
    if (!translator_) {
        Q_EMIT documentFailed(jobId, tr("No model is loaded."));
        return;
    }
    try {
        documents::DocumentRequest request;
        request.input = path;
        request.to = to.toStdString();
        request.translate = [&](const std::string& text) {
            TranslationRequest job{text, from.toStdString(), request.to, 1, 0, {}};
            job.onDelta = [&](std::string_view) { return !stopped(); };
            auto out = translator_->translate(job);
            if (stopped()) throw Cancelled("document translation stopped");
            return out;
        };
        request.progress = [this, jobId](std::size_t done, std::size_t total) {
            Q_EMIT documentProgress(jobId, static_cast<int>(done), static_cast<int>(total));
        };
        const auto result = documents::translateDocument(request);
        Q_EMIT documentFinished(jobId, result.output, static_cast<int>(result.keptSource));
    } catch (const Cancelled&) {
        Q_EMIT documentFailed(jobId, tr("Stopped; nothing was written."));
    } catch (const std::exception& e) {
        Q_EMIT documentFailed(jobId, QString::fromUtf8(e.what()));
    }
}

void EngineWorker::runLoad(const QString& modelIdOrPath) {
    try {
        LoadOptions options;
        options.progress = [this](LoadPhase phase, double fraction) {
            Q_EMIT loadProgress(QString::fromUtf8(phaseName(phase).data(), static_cast<int>(phaseName(phase).size())), fraction);
            return !cancelLoad_.load();
        };
        const ModelStore store;
        auto model = openModel(store, modelIdOrPath.toStdString(), options);
        auto translator = std::make_shared<Translator>(model);
        ModelInfo info{QString::fromStdString(model->id()),
                       QString::fromStdString(model->architecture),
                       QString::fromStdString(model->device()),
                       {},
                       QString::fromStdString(translator->fixedPair().first),
                       QString::fromStdString(translator->fixedPair().second)};
        for (const auto& code : translator->targetLanguages())
            info.targetLanguages << QString::fromStdString(code);
        const auto& s = model->loaded.stats;
        const LoadInfo stats{s.readySeconds, s.bytes, s.copies};
        // Only a complete load replaces the model in use: a failed or cancelled one leaves it untouched.
        model_ = std::move(model);
        translator_ = std::move(translator);
        Q_EMIT loaded(info, stats);
    } catch (const Cancelled&) {
        Q_EMIT loadFailed(tr("Loading was cancelled."));
    } catch (const std::exception& e) {
        Q_EMIT loadFailed(QString::fromUtf8(e.what()));
    }
}

void EngineWorker::runNextTranslation() {
    std::optional<Pending> request;
    {
        std::lock_guard lock(mutex_);
        request.swap(mailbox_);
    }
    if (!request || request->id != latest_.load()) return;  // superseded before it started
    const quint64 id = request->id;
    if (!translator_) {
        Q_EMIT failed(id, tr("No model is loaded."));
        return;
    }
    try {
        TranslationRequest job{request->text.toStdString(), request->from.toStdString(), request->to.toStdString(), 1, id, {}};
        job.onDelta = [this, id](std::string_view delta) {
            if (latest_.load() != id || cancelled_.load() == id) return false;  // superseded or stopped: drop it
            Q_EMIT tokenReady(id, QString::fromUtf8(delta.data(), static_cast<int>(delta.size())));
            return true;
        };
        TranslationStats stats;
        const auto text = translator_->translate(job, &stats);
        if (latest_.load() != id) return;  // superseded: its result is never delivered
        Q_EMIT finished(id, TranslationInfo{QString::fromStdString(text), stats.sourceTokens, stats.generatedTokens,
                                            stats.firstTokenSeconds, stats.totalSeconds, stats.stopped});
    } catch (const std::exception& e) {
        if (latest_.load() == id) Q_EMIT failed(id, QString::fromUtf8(e.what()));
    }
}

}  // namespace dragoman
