#pragma once
// What the window shows, without a widget: the languages, the model and adapter in use, the running text
// translation and document job, and the settings that survive a restart. The window (ui/main_window) forwards
// what a person does to the slots and shows what the signals say. The controller talks to the engine thread
// (EngineWorker), drops whatever a superseded request still reports, and keeps the window's rules in one
// place: a new model starts without an adapter, a model with a fixed pair sets the languages, a new adapter
// re-translates the text shown, translate-as-you-type waits for a pause in typing.
#include "document_queue.h"
#include "engine_worker.h"
#include "language_choices.h"

#include <QObject>
#include <QString>

class QTimer;

namespace dragoman {

class TranslationController : public QObject {
    Q_OBJECT
public:
    // `engine` may be null (nothing can be translated); it must outlive the controller. The languages,
    // translate-as-you-type and the last model come from QSettings (~/.config/dragoman).
    explicit TranslationController(EngineWorker* engine = nullptr, QObject* parent = nullptr);

    // Settings › Compute threads: what the engine thread is sized with at start (0: one per core).
    static int configuredThreads();

    EngineWorker* engine() const { return engine_; }
    bool canTranslate() const { return engine_ && !loadedModel_.isEmpty(); }
    QString sourceLanguage() const { return from_; }
    QString targetLanguage() const { return to_; }
    // What the loaded model can be asked for (every known language before one is loaded): never the same
    // language on both sides, and a swap only where the model also translates the other way.
    const LanguageChoices& languageChoices() const { return choices_; }
    bool canSwap() const;
    // With the source "Detect language": the language the last text was translated from (empty: none yet).
    QString detectedSource() const { return detected_; }
    QString loadedModel() const { return loadedModel_; }  // empty until a model is loaded
    QString lastSessionModel() const;                     // the model loaded when Dragoman last ran
    QString adapterInUse() const { return adapter_; }     // empty: none
    bool translatesAsYouType() const { return asYouType_; }
    bool documentRunning() const { return document_ != 0; }
    // The documents dropped so far and what became of each (a model for the window's document panel).
    DocumentQueue* documentQueue() const { return queue_; }
    // The supported documents among `paths`, folders searched (their subfolders too, hidden ones not), sorted.
    static QStringList documentsIn(const QStringList& paths);
    int typingPauseMs() const;
    // Hy-MT2's instructions for the loaded model (remembered per model); available only where it takes them.
    bool instructionsAvailable() const { return instructionsAvailable_; }
    QString style() const { return style_; }
    QStringList preferences() const { return preferences_; }
    // The loaded model's prompt templates as its identity selects them (empty: a model without prompts), and
    // the choice made for it by hand (empty: that one).
    QString modelPromptProfile() const { return modelProfile_; }
    QString promptProfile() const { return profileOverride_; }

public Q_SLOTS:
    void setLanguages(const QString& from, const QString& to);
    void swapLanguages();
    void setTranslateAsYouType(bool on);
    void setConfiguredThreads(int threads);  // takes effect at the next start
    // The model a window opens with: `requested` (a command-line argument) if given, else the last session's,
    // else the bundled default. Returns false when there is none to load.
    bool loadStartupModel(const QString& requested = {});
    void loadModel(const QString& modelIdOrPath);
    void cancelLoad();
    // An adapter folder or id applied on top of the loaded model, without a reload (empty: none).
    void useAdapter(const QString& adapterIdOrPath);
    // The loaded model's style ("formal"; empty: none) and preferences; saved for that model, and the text
    // shown is translated again with them.
    void setInstructions(const QString& style, const QStringList& preferences);
    // "hy-mt1.5" or "hy-mt2" for the loaded model in place of what its name selects, or empty; remembered for it.
    void setPromptProfile(const QString& profile);
    // The source pane's text: kept as what translate() sends; with translate-as-you-type on, translated once
    // typing pauses.
    void setSourceText(const QString& text);
    void translate();
    // Stops the running text translation and document job, and a pending as-you-type translation.
    void stop();
    // Translates documents beside themselves (documents/document_translation.h), one at a time in the order
    // given, each into the languages chosen when it was added; folders are searched for documents.
    void translateDocument(const QString& path);
    void translateDocuments(const QStringList& paths);
    // Cancels one document of the queue (row), or every one not finished.
    void cancelDocument(int row);
    void cancelAllDocuments();

Q_SIGNALS:
    void languagesChanged(const QString& from, const QString& to);
    // A model loaded: the languages it offers (languagesChanged follows if the pair shown had to change).
    void languageChoicesChanged(const QStringList& sources, const QStringList& targets);
    void loadStarted(const QString& modelIdOrPath);
    // phase: for people ("Reading weights"); fraction: 0..1 over the whole load.
    void loadProgress(const QString& phase, double fraction);
    void modelLoaded(const dragoman::ModelInfo& info, const dragoman::LoadInfo& stats);
    // The previous model, if any, stays loaded (loadedModel()).
    void loadFailed(const QString& message);
    void adapterChanged(const QString& adapterIdOrPath);  // empty: none
    // After a model loads and when they change: what the instructions field shows, and whether it is shown.
    void instructionsChanged(const QString& style, const QStringList& preferences, bool available);
    // The adapter in use before stays (adapterInUse()).
    void adapterFailed(const QString& adapterIdOrPath, const QString& message);
    void translationStarted();  // the output starts empty
    // The source "Detect language": what the text looks like (empty: too little to tell), whether the detector was
    // sure, and the language the model was asked to translate from (empty: none named).
    void sourceDetected(const QString& detected, bool sure, const QString& from);
    void outputAppended(const QString& delta);
    void translationFinished(const dragoman::TranslationInfo& stats);
    void translationFailed(const QString& message);
    void documentStarted(const QString& path);
    void documentProgress(int percent);
    // keptOriginal: passages whose original text the output keeps (the model answered nothing, or the text did not
    // read as its format says: DocumentResult::keptSource and keptAsIs).
    void documentFinished(const QString& outputPath, int keptOriginal);
    void documentFailed(const QString& message);  // also for a stopped job, and a document dropped too early

private:
    void connectEngine();
    // Shows a pair the model offers without saving it as the person's choice; false when nothing changed.
    bool showPair(const QString& from, const QString& to);
    void onLoaded(const ModelInfo& info, const LoadInfo& stats);
    void startNextDocument();

    EngineWorker* engine_ = nullptr;
    QTimer* typingPause_ = nullptr;
    QString from_, to_, source_, loadedModel_, adapter_, style_;
    QString detected_;  // with the source "Detect language": the language the last text was translated from
    QStringList preferences_;
    LanguageChoices choices_ = allLanguageChoices();
    bool instructionsAvailable_ = false;
    QString modelProfile_, profileOverride_;
    void updateInstructionsAvailable();
    bool asYouType_ = true;
    quint64 request_ = 0;   // the text translation whose output is shown
    quint64 document_ = 0;  // the engine's job for the queue's running document; 0: none running
    DocumentQueue* queue_ = nullptr;
};

}  // namespace dragoman
