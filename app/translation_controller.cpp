#include "translation_controller.h"

#include "documents/document_format.h"
#include "model_library.h"

#include <QDir>
#include <QDirIterator>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSettings>
#include <QTimer>
#include <QUrl>

namespace dragoman {
namespace {

constexpr auto kFrom = "languages/from";
constexpr auto kTo = "languages/to";
constexpr auto kAsYouType = "translate/asYouType";
constexpr auto kModel = "model/id";
constexpr auto kThreads = "engine/threads";

}  // namespace

TranslationController::TranslationController(EngineWorker* engine, QObject* parent)
    : QObject(parent), engine_(engine), queue_(new DocumentQueue(this)) {
    QSettings settings;
    // A first run: English into the system's language (German where that is English or unknown).
    std::tie(from_, to_) =
        pairWithin(choices_, settings.value(kFrom, QStringLiteral("en")).toString(), settings.value(kTo, systemLanguage()).toString());
    asYouType_ = settings.value(kAsYouType, true).toBool();
    typingPause_ = new QTimer(this);
    typingPause_->setSingleShot(true);
    typingPause_->setInterval(400);
    connect(typingPause_, &QTimer::timeout, this, [this] {
        if (!source_.trimmed().isEmpty()) translate();
    });
    if (engine_) connectEngine();
}

int TranslationController::configuredThreads() {
    return std::max(0, QSettings().value(kThreads, 0).toInt());
}

void TranslationController::setConfiguredThreads(int threads) {
    QSettings().setValue(kThreads, std::max(0, threads));
}

QString TranslationController::lastSessionModel() const {
    return QSettings().value(kModel).toString();
}

int TranslationController::typingPauseMs() const {
    return typingPause_->interval();
}

void TranslationController::setLanguages(const QString& from, const QString& to) {
    if (!showPair(from, to)) return;
    QSettings settings;
    settings.setValue(kFrom, from_);
    settings.setValue(kTo, to_);
}

bool TranslationController::showPair(const QString& from, const QString& to) {
    if (!choices_.offers(from, to) || (from == from_ && to == to_)) return false;
    if (from != kDetectLanguage) detected_.clear();  // what was detected belongs to "Detect language"
    from_ = from;
    to_ = to;
    Q_EMIT languagesChanged(from_, to_);
    return true;
}

bool TranslationController::canSwap() const {
    return choices_.offers(to_, from_ == kDetectLanguage ? detected_ : from_);
}

// With "Detect language", the language last detected becomes the target.
void TranslationController::swapLanguages() {
    if (!canSwap()) return;
    const QString from = to_, to = from_ == kDetectLanguage ? detected_ : from_;  // copies: setLanguages assigns them
    setLanguages(from, to);
}

void TranslationController::setTranslateAsYouType(bool on) {
    asYouType_ = on;
    if (!on) typingPause_->stop();
    QSettings().setValue(kAsYouType, on);
}

bool TranslationController::loadStartupModel(const QString& requested) {
    QString model = requested;
    if (model.isEmpty()) {
        // The last session's model, if the store still has it; else the bundled default.
        const auto last = lastSessionModel();
        for (const auto& choice : availableModels())
            if (choice.id == last) model = last;
    }
    if (model.isEmpty()) model = defaultModelId();
    if (model.isEmpty() || !engine_) return false;
    loadModel(model);
    return true;
}

void TranslationController::loadModel(const QString& modelIdOrPath) {
    if (!engine_) return;
    Q_EMIT loadStarted(modelIdOrPath);
    engine_->requestLoad(modelIdOrPath);
}

void TranslationController::cancelLoad() {
    if (engine_) engine_->cancelLoad();
}

void TranslationController::useAdapter(const QString& adapterIdOrPath) {
    if (engine_) engine_->requestAdapter(adapterIdOrPath);
}

namespace {
QString instructionsKey(const QString& model, const char* what) {
    return QStringLiteral("instructions/") + QString::fromLatin1(QUrl::toPercentEncoding(model)) + "/" + what;
}
}  // namespace

void TranslationController::setInstructions(const QString& style, const QStringList& preferences) {
    QStringList kept;
    for (const auto& p : preferences)
        if (!p.trimmed().isEmpty()) kept << p.trimmed();
    if (style.trimmed() == style_ && kept == preferences_) return;
    style_ = style.trimmed();
    preferences_ = kept;
    if (!loadedModel_.isEmpty()) {
        QSettings settings;
        settings.setValue(instructionsKey(loadedModel_, "style"), style_);
        settings.setValue(instructionsKey(loadedModel_, "preferences"), preferences_);
    }
    if (engine_) engine_->setInstructions(style_, preferences_);
    Q_EMIT instructionsChanged(style_, preferences_, instructionsAvailable_);
    if (instructionsAvailable_ && !source_.trimmed().isEmpty()) translate();
}

void TranslationController::updateInstructionsAvailable() {
    const auto effective = profileOverride_.isEmpty() ? modelProfile_ : profileOverride_;
    instructionsAvailable_ = !modelProfile_.isEmpty() && effective == QLatin1String("hy-mt2");
}

void TranslationController::setPromptProfile(const QString& profile) {
    if (profile == profileOverride_ || modelProfile_.isEmpty()) return;
    profileOverride_ = profile;
    QSettings().setValue(instructionsKey(loadedModel_, "profile"), profileOverride_);
    if (engine_) engine_->setPromptProfile(profileOverride_);
    updateInstructionsAvailable();
    Q_EMIT instructionsChanged(style_, preferences_, instructionsAvailable_);
    if (!source_.trimmed().isEmpty()) translate();
}

void TranslationController::setSourceText(const QString& text) {
    source_ = text;
    if (asYouType_ && canTranslate()) typingPause_->start();
}

void TranslationController::translate() {
    typingPause_->stop();                                        // an explicit request replaces the pending as-you-type one
    if (!canTranslate() || source_.trimmed().isEmpty()) return;  // nothing to translate: nothing to report
    Q_EMIT translationStarted();
    request_ = engine_->requestTranslation(source_, from_, to_);
}

void TranslationController::stop() {
    typingPause_->stop();
    if (!engine_) return;
    if (request_) engine_->cancel(request_);
    // Documents are stopped from the document list (cancelDocument, cancelAllDocuments), never by Stop or Esc:
    // clearing the panes must not lose a batch.
}

namespace {

// "report.de.md" beside "report.md" (or "report.de (2).md"): a copy an earlier drop wrote, not a document to
// translate again when the folder is dropped once more.
bool isTranslatedCopy(const QString& path) {
    const QFileInfo info(path);
    auto stem = info.completeBaseName();  // "report.de" or "report.de (2)"
    stem.remove(QRegularExpression(QStringLiteral(R"( \(\d+\)$)")));
    const auto dot = stem.lastIndexOf('.');
    if (dot <= 0 || languageName(stem.mid(dot + 1)) == stem.mid(dot + 1)) return false;  // no language code there
    return QFileInfo::exists(info.dir().filePath(stem.left(dot) + "." + info.suffix()));
}

}  // namespace

QStringList TranslationController::documentsIn(const QStringList& paths) {
    // A folder is searched to a bound (entries visited, documents kept), so dropping a home folder cannot hang
    // the window; hidden files and folders are skipped (QDirIterator lists none without QDir::Hidden).
    constexpr int kMostFromAFolder = 1000, kMostVisited = 20000;
    QStringList found;
    for (const auto& path : paths) {
        const QFileInfo info(path);
        if (info.isFile() && documents::formatOf(path) && !found.contains(path)) found << path;
        if (!info.isDir()) continue;
        QStringList inside;
        QDirIterator it(path, QDir::Files | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
        for (int visited = 0; it.hasNext() && visited < kMostVisited && inside.size() < kMostFromAFolder; ++visited)
            if (const auto file = it.next(); documents::formatOf(file) && !found.contains(file) && !isTranslatedCopy(file)) inside << file;
        inside.sort();
        found << inside;
    }
    return found;
}

void TranslationController::translateDocument(const QString& path) {
    translateDocuments({path});
}

void TranslationController::translateDocuments(const QStringList& paths) {
    if (!canTranslate()) {
        Q_EMIT documentFailed(tr("load a model first, then drop the document again."));
        return;
    }
    const auto documents = documentsIn(paths);
    if (documents.isEmpty()) {
        Q_EMIT documentFailed(tr("nothing to translate there (documents: %1).").arg(documents::supportedPatterns()));
        return;
    }
    for (const auto& path : documents)
        queue_->add(path, from_, to_);
    startNextDocument();
}

void TranslationController::startNextDocument() {
    if (document_ || !engine_) return;
    const int row = queue_->nextQueued();
    if (row < 0) return;
    queue_->start(row);
    const auto& job = queue_->job(row);
    Q_EMIT documentStarted(job.path);
    document_ = engine_->requestDocument(job.path, job.from, job.to);
}

void TranslationController::cancelDocument(int row) {
    if (row < 0 || row >= queue_->size()) return;
    if (!queue_->cancel(row) && row == queue_->running() && engine_) engine_->cancelDocument();
}

void TranslationController::cancelAllDocuments() {
    for (int row = 0; row < queue_->size(); ++row)
        cancelDocument(row);
}

void TranslationController::onLoaded(const ModelInfo& info, const LoadInfo& stats) {
    loadedModel_ = info.id;
    adapter_.clear();  // a new model starts without an adapter (the engine dropped them)
    QSettings().setValue(kModel, info.id);
    modelProfile_ = info.promptProfile;
    {
        const QSettings settings;
        style_ = settings.value(instructionsKey(info.id, "style")).toString();
        preferences_ = settings.value(instructionsKey(info.id, "preferences")).toStringList();
        profileOverride_ = modelProfile_.isEmpty() ? QString() : settings.value(instructionsKey(info.id, "profile")).toString();
    }
    updateInstructionsAvailable();
    if (engine_) {
        engine_->setPromptProfile(profileOverride_);
        engine_->setInstructions(style_, preferences_);
    }
    Q_EMIT instructionsChanged(style_, preferences_, instructionsAvailable_);
    choices_ = languageChoicesFor(info);
    detected_.clear();
    Q_EMIT languageChoicesChanged(choices_.sources, choices_.targets);
    // The pair a person chose last, where this model offers it: a bilingual model's own pair is shown, not saved,
    // so the next multilingual model comes back to the person's choice.
    const QSettings settings;
    const auto [from, to] = pairWithin(choices_, settings.value(kFrom, from_).toString(), settings.value(kTo, to_).toString());
    showPair(from, to);
    // Documents still queued for a pair the new model cannot do fail now, saying why, rather than on their turn.
    for (int row = 0; row < queue_->size(); ++row)
        if (const auto& job = queue_->job(row); job.state == DocumentQueue::State::Queued && !choices_.offers(job.from, job.to) &&
                                                !(job.from == kDetectLanguage && choices_.targets.contains(job.to)))
            queue_->fail(row, tr("%1 does not translate %2 into %3").arg(info.id, languageName(job.from), languageName(job.to)));
    Q_EMIT modelLoaded(info, stats);
}

void TranslationController::connectEngine() {
    connect(engine_, &EngineWorker::loadProgress, this, &TranslationController::loadProgress);
    connect(engine_, &EngineWorker::loaded, this, &TranslationController::onLoaded);
    connect(engine_, &EngineWorker::loadFailed, this, &TranslationController::loadFailed);
    connect(engine_, &EngineWorker::adapterChanged, this, [this](const QString& adapter) {
        adapter_ = adapter;
        Q_EMIT adapterChanged(adapter);
        if (!source_.trimmed().isEmpty()) translate();  // the text shown, with the new adapter
    });
    connect(engine_, &EngineWorker::adapterFailed, this, &TranslationController::adapterFailed);
    connect(engine_, &EngineWorker::sourceDetected, this, [this](quint64 id, const QString& detected, bool sure, const QString& from) {
        if (id != request_) return;
        detected_ = from;
        Q_EMIT sourceDetected(detected, sure, from);
    });
    connect(engine_, &EngineWorker::tokenReady, this, [this](quint64 id, const QString& delta) {
        if (id == request_) Q_EMIT outputAppended(delta);  // else a superseded request
    });
    connect(engine_, &EngineWorker::finished, this, [this](quint64 id, const TranslationInfo& stats) {
        if (id == request_) Q_EMIT translationFinished(stats);
    });
    connect(engine_, &EngineWorker::failed, this, [this](quint64 id, const QString& message) {
        if (id == request_) Q_EMIT translationFailed(message);
    });
    connect(engine_, &EngineWorker::documentProgress, this, [this](quint64 id, int done, int total) {
        if (id != document_ || total <= 0 || queue_->running() < 0) return;
        queue_->progress(queue_->running(), done, total);
        Q_EMIT documentProgress(done * 100 / total);
    });
    connect(engine_, &EngineWorker::documentFinished, this, [this](quint64 id, const QString& output, int keptOriginal) {
        if (id != document_) return;
        document_ = 0;
        if (queue_->running() >= 0) queue_->succeed(queue_->running(), output, keptOriginal);
        Q_EMIT documentFinished(output, keptOriginal);
        startNextDocument();
    });
    connect(engine_, &EngineWorker::documentFailed, this, [this](quint64 id, const QString& message) {
        if (id != document_) return;
        document_ = 0;
        if (queue_->running() >= 0) queue_->fail(queue_->running(), message);
        Q_EMIT documentFailed(message);
        startNextDocument();
    });
}

}  // namespace dragoman
