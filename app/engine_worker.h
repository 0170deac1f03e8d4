#pragma once
// The engine thread. One EngineWorker owns the loaded model and runs every load and translation on its own
// QThread; the GUI talks to it through thread-safe request methods and hears back through queued signals.
// Loads and translations are latest-wins: a newer request supersedes the running one, which stops at its
// next decoding step (or between the layers of a long prompt, or within ~100 ms of a load), and nothing of a
// superseded request is delivered. The worker computes through a TranslationBackend (translation_backend.h).
#include <QObject>
#include <QString>
#include <QStringList>
#include <QThread>

#include "translation_backend.h"

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

namespace dragoman {

struct ModelInfo {
    QString id, architecture, device;
    QStringList targetLanguages;  // empty: a fixed pair
    QString fixedFrom, fixedTo;
    bool instructions = false;  // takes a style and preferences (Hy-MT2's prompts)
    QString promptProfile;      // "hy-mt1.5", "hy-mt2" as the model's identity says; empty: no prompts
};

struct LoadInfo {
    double readySeconds = 0;
    quint64 bytes = 0, copies = 0;
};

struct TranslationInfo {
    QString text;
    qint64 sourceTokens = 0, generatedTokens = 0;
    double firstTokenSeconds = -1, totalSeconds = 0;
    bool stopped = false;
};

class EngineWorker : public QObject {
    Q_OBJECT
public:
    // `threads`: compute threads for the engine (0: one per core). Set once, on the engine thread, before any
    // inference; a later change takes effect at the next start.
    explicit EngineWorker(int threads = 0, std::unique_ptr<TranslationBackend> backend = std::make_unique<LocalBackend>());
    ~EngineWorker() override;

    // All thread-safe; they return at once.
    // A newer load supersedes one queued or running (which is cancelled and reports nothing).
    void requestLoad(const QString& modelIdOrPath);
    void cancelLoad();  // the running load stops and reports loadFailed
    // `from` "auto": the text's language is detected first (sourceDetected), and a text plainly in a language the
    // model does not read fails with the reason.
    quint64 requestTranslation(const QString& text, const QString& from, const QString& to);
    void cancel(quint64 requestId);
    // The LoRA adapter later translations use (an adapter folder or imported id; empty: none), loaded on the
    // engine thread and kept resident, so switching back and forth costs no reload. A new model drops them.
    void requestAdapter(const QString& adapterIdOrPath);
    // The style and preferences later text and document translations carry, where the model takes them
    // (ModelInfo::instructions; others ignore them). Both set: the style goes first among the preferences, in the
    // words of the card's style template, since Hy-MT2's prompts carry one instruction at a time.
    void setInstructions(const QString& style, const QStringList& preferences);
    // The prompt templates later requests use in place of the model's own ("hy-mt1.5", "hy-mt2"; empty: the
    // model's); ignored by models without prompts.
    void setPromptProfile(const QString& profile);
    // A document (documents/document_translation.h) translated beside itself, on the engine thread after what
    // is queued before it; text translations requested meanwhile wait for it. Returns the job's id.
    // `from` "auto": each passage's language is detected.
    quint64 requestDocument(const QString& path, const QString& from, const QString& to);
    // Stops the running document job at its next token; it leaves no output file.
    void cancelDocument();

Q_SIGNALS:
    // phase: for people ("Reading weights"); fraction: 0..1 over the whole load, never going back.
    void loadProgress(const QString& phase, double fraction);
    void loaded(const dragoman::ModelInfo& info, const dragoman::LoadInfo& stats);
    void loadFailed(const QString& message);
    void adapterChanged(const QString& adapterIdOrPath);                         // empty: none
    void adapterFailed(const QString& adapterIdOrPath, const QString& message);  // the previous adapter stays
    // For a request with the source "auto": what the text looks like (empty: too little to tell; `sure`: the
    // detector had no doubt) and what the model was asked to translate from.
    void sourceDetected(quint64 requestId, const QString& detected, bool sure, const QString& from);
    void tokenReady(quint64 requestId, const QString& delta);
    void finished(quint64 requestId, const dragoman::TranslationInfo& stats);
    void failed(quint64 requestId, const QString& message);
    void documentProgress(quint64 jobId, int done, int total);
    // keptOriginal: passages whose original text the output keeps (the model answered nothing, or the text did not
    // read as its format says: DocumentResult::keptSource and keptAsIs).
    void documentFinished(quint64 jobId, const QString& outputPath, int keptOriginal);
    void documentFailed(quint64 jobId, const QString& message);  // also for a cancelled job

private Q_SLOTS:
    // Runs the oldest job post() queued (engine thread).
    void runPosted();

private:
    struct Pending {
        quint64 id;
        QString text, from, to;
    };
    // Queues `job` for the engine thread. The job travels through mutex_, not inside a queued functor: Qt's
    // event queue synchronises through a futex that ThreadSanitizer cannot see (Debian's Qt is not
    // instrumented), while this hand-off it can.
    void post(std::function<void()> job);
    void runLoad(quint64 loadId, const QString& modelIdOrPath);
    void runAdapter(const QString& adapterIdOrPath);
    void runNextTranslation();
    void runDocument(quint64 jobId, const QString& path, const QString& from, const QString& to);

    QThread thread_;
    std::mutex mutex_;
    std::deque<std::function<void()>> posted_;  // guarded by mutex_
    std::optional<Pending> mailbox_;            // the latest request not started yet
    std::atomic<quint64> latest_{0};            // newest request id; older ones stop
    CancelToken running_;                       // the running translation's (guarded by mutex_)
    quint64 runningId_ = 0;                     // guarded by mutex_
    std::atomic<quint64> latestLoad_{0};
    CancelToken loadCancel_;                                      // the running load's (guarded by mutex_)
    CancelToken documentCancel_;                                  // the running document job's (guarded by mutex_)
    std::atomic<quint64> documents_{0};                           // last document job id handed out
    std::atomic<quint64> cancelledUpTo_{0};                       // document jobs up to this id are stopped
    std::atomic<bool> closing_{false};                            // the worker is being destroyed
    std::unique_ptr<TranslationBackend> backend_;                 // engine thread only
    std::map<QString, std::shared_ptr<const LoraSet>> adapters_;  // engine thread only: resident for this model
    std::shared_ptr<const LoraSet> adapter_;                      // engine thread only: the one requests use
    QString modelProfile_;                                        // engine thread only: the loaded model's prompts
    ModelDescription model_;                                      // engine thread only: the loaded model
    QString profileOverride_;                                     // guarded by mutex_
    QString style_;                                               // guarded by mutex_
    QStringList preferences_;                                     // guarded by mutex_
    // Puts the instructions in force into a request (engine thread).
    void applyInstructions(TranslationRequest& request);
};

}  // namespace dragoman

Q_DECLARE_METATYPE(dragoman::ModelInfo)
Q_DECLARE_METATYPE(dragoman::LoadInfo)
Q_DECLARE_METATYPE(dragoman::TranslationInfo)
