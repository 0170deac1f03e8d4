#include "main_window.h"

#include "about_dialog.h"
#include "document_panel.h"
#include "focus_frame_style.h"
#include "instructions_bar.h"
#include "model_manager_dialog.h"
#include "server_dialog.h"

#include "documents/document_translation.h"
#include "language_list.h"
#include "model_library.h"
#include "translation_controller.h"

#include <QActionGroup>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QCloseEvent>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontDialog>
#include <QMimeData>
#include <QPointer>
#include <QSettings>
#include <QTime>
#include <QTimer>
#include <QUrl>

#include <QComboBox>
#include <QHBoxLayout>
#include <QKeySequence>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>
#include <QSignalBlocker>
#include <QSplitter>
#include <QStatusBar>
#include <QTextCursor>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <thread>

namespace dragoman {
namespace {

QComboBox* makeLanguagePicker(const QString& accessibleName) {
    auto* box = new QComboBox;
    box->setAccessibleName(accessibleName);
    // As wide as the row allows, at least a dozen characters: at twice the font size the window still fits a small
    // screen, and the list that opens shows every name whole.
    box->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    box->setMinimumContentsLength(12);
    return box;
}

// The languages a picker offers: full names, the codes as tooltips.
void fillLanguagePicker(QComboBox* box, const QStringList& codes) {
    const QSignalBlocker block(box);
    box->clear();
    for (const auto& code : codes) {
        box->addItem(languageName(code), code);
        box->setItemData(box->count() - 1,
                         code == kDetectLanguage ? MainWindow::tr("Each text's language is detected when it is translated") : code,
                         Qt::ToolTipRole);
    }
    // One language: nothing to choose, but still reachable by Tab so a screen reader can say which it is.
    box->setEnabled(true);
    box->setProperty("single", codes.size() == 1);
}

}  // namespace

MainWindow::MainWindow(TranslationController* controller, QWidget* parent)
    : QMainWindow(parent), controller_(controller ? controller : new TranslationController(nullptr, this)) {
    setWindowTitle(QStringLiteral("Dragoman"));
    setWindowIcon(QIcon(QStringLiteral(":/dragoman/icons/dragoman.svg")));
    buildUi();
    showNoModel();
    connectInput();
    connectController();
    connectDocuments();
    resize(1000, 640);
    restoreSettings();
    // Text typed as soon as the window opens goes to the source pane.
    source_->setFocus();
    if (firstRun_)
        translationStatus_->setText(tr("Type or paste text on the left: Ctrl+Enter translates, Esc stops; drop documents on the window."));
}

// Documents still queued or being translated are not dropped silently: the window asks first (the box is
// asynchronous, the close is repeated once the answer is quit). Their copies are never half-written either way.
void MainWindow::closeEvent(QCloseEvent* event) {
    const auto* queue = controller_->documentQueue();
    int unfinished = 0;
    for (int row = 0; row < queue->size(); ++row)
        unfinished += queue->finished(row) ? 0 : 1;
    if (unfinished > 0 && !closeConfirmed_) {
        event->ignore();
        auto* box = new QMessageBox(QMessageBox::Question, tr("Documents are still being translated"),
                                    tr("%n document(s) in the list are not translated yet. Quit and stop them?", nullptr, unfinished),
                                    QMessageBox::NoButton, this);
        box->setObjectName(QStringLiteral("confirmQuit"));
        box->setAttribute(Qt::WA_DeleteOnClose);
        auto* quit = box->addButton(tr("&Quit and stop them"), QMessageBox::DestructiveRole);
        box->addButton(tr("&Keep translating"), QMessageBox::RejectRole);
        box->setDefaultButton(qobject_cast<QPushButton*>(box->buttons().last()));
        connect(box, &QMessageBox::buttonClicked, this, [this, quit](QAbstractButton* clicked) {
            if (clicked != quit) return;
            closeConfirmed_ = true;
            controller_->cancelAllDocuments();
            close();
        });
        box->open();
        return;
    }
    saveSettings();
    QMainWindow::closeEvent(event);
}

// Geometry is saved a moment after the window stops moving or resizing, so a crash or a kill loses nothing.
void MainWindow::resizeEvent(QResizeEvent* event) {
    QMainWindow::resizeEvent(event);
    if (settingsRestored_) saveGeometrySoon_->start();
}

void MainWindow::moveEvent(QMoveEvent* event) {
    QMainWindow::moveEvent(event);
    if (settingsRestored_) saveGeometrySoon_->start();
}

// The view's own settings: geometry and font (QSettings: ~/.config/dragoman). Languages, the model, threads and
// translate-as-you-type are the controller's.
void MainWindow::restoreSettings() {
    saveGeometrySoon_ = new QTimer(this);
    saveGeometrySoon_->setSingleShot(true);
    saveGeometrySoon_->setInterval(500);
    connect(saveGeometrySoon_, &QTimer::timeout, this, [this] { QSettings().setValue("window/geometry", saveGeometry()); });
    QSettings settings;
    firstRun_ = !settings.contains("window/geometry") && !settings.contains("model/id");
    if (auto geometry = settings.value("window/geometry").toByteArray(); !geometry.isEmpty()) restoreGeometry(geometry);
    if (auto font = settings.value("window/font").toString(); !font.isEmpty()) {
        QFont f;
        if (f.fromString(font)) setPaneFont(f);
    }
    // The panes' sizes as the person left them, saved when a divider is let go.
    for (auto* splitter : {panes_, body_}) {
        splitter->restoreState(settings.value("window/" + splitter->objectName()).toByteArray());
        connect(splitter, &QSplitter::splitterMoved, this,
                [splitter] { QSettings().setValue("window/" + splitter->objectName(), splitter->saveState()); });
    }
    settingsRestored_ = true;
}

void MainWindow::saveSettings() const {
    QSettings settings;
    settings.setValue("window/geometry", saveGeometry());
    settings.setValue("window/font", source_->font().toString());
}

void MainWindow::setPaneFont(const QFont& font) {
    source_->setFont(font);
    output_->setFont(font);
    if (settingsRestored_) QSettings().setValue("window/font", font.toString());
}

void MainWindow::chooseFont() {
    bool ok = false;
    const QFont font = QFontDialog::getFont(&ok, source_->font(), this, tr("Font of the text panes"));
    if (ok) setPaneFont(font);
}

QList<QAction*> MainWindow::threadActions() const {
    return threads_->actions();
}

void MainWindow::buildSettingsMenu() {
    auto* settingsMenu = menuBar()->addMenu(tr("&Settings"));
    settingsMenu->addAction(tr("&Font…"), this, &MainWindow::chooseFont);
    auto* threadsMenu = settingsMenu->addMenu(tr("Compute &threads"));
    threads_ = new QActionGroup(this);
    const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    const int configured = TranslationController::configuredThreads();
    for (int n = 0; n <= cores; ++n) {
        auto* action = threadsMenu->addAction(n == 0 ? tr("&Automatic (%1, one per core)").arg(cores) : QString::number(n));
        action->setCheckable(true);
        action->setData(n);
        action->setChecked(n == configured || (n == 0 && configured > cores));
        threads_->addAction(action);
    }
    // Which model card's prompts a HunYuan model gets, where its name does not say (or says wrong).
    auto* promptsMenu = settingsMenu->addMenu(tr("&Prompts"));
    profiles_ = new QActionGroup(this);
    for (const auto& [label, profile] :
         {std::pair{tr("As the model's &name says"), QString()}, std::pair{tr("HY-MT&1.5"), QStringLiteral("hy-mt1.5")},
          std::pair{tr("Hy-MT&2 (style and preferences)"), QStringLiteral("hy-mt2")}}) {
        auto* action = promptsMenu->addAction(label);
        action->setCheckable(true);
        action->setData(profile);
        profiles_->addAction(action);
    }
    connect(profiles_, &QActionGroup::triggered, this,
            [this](QAction* action) { controller_->setPromptProfile(action->data().toString()); });
    showPromptProfile();
    // The engine sizes its thread pools once, before its first inference: a new choice applies at the next start.
    connect(threads_, &QActionGroup::triggered, this, [this](QAction* action) {
        controller_->setConfiguredThreads(action->data().toInt());
        statusBar()->showMessage(
            tr("Compute threads: %1. This takes effect the next time Dragoman starts.").arg(action->text().remove('&')), 8000);
    });
}

void MainWindow::showPromptProfile() {
    const auto model = controller_->modelPromptProfile();
    for (auto* action : profiles_->actions()) {
        action->setEnabled(!model.isEmpty());
        action->setChecked(action->data().toString() == controller_->promptProfile());
        if (action->data().toString().isEmpty())
            action->setText(model.isEmpty() ? tr("As the model's &name says") : tr("As the model's &name says (%1)").arg(model));
    }
}

QList<QAction*> MainWindow::promptProfileActions() const {
    return profiles_->actions();
}

void MainWindow::connectToServer() {
    runServerDialog(std::nullopt);
}

void MainWindow::editServer() {
    runServerDialog(savedServerEngine(controller_->loadedModel()));
}

void MainWindow::runServerDialog(const std::optional<ServerEngine>& existing) {
    ServerDialog dialog(existing, this);
    if (dialog.exec() != QDialog::Accepted) return;
    fillModelPicker();
    if (!dialog.removed()) loadModel(dialog.engine().id());
}

void MainWindow::fillModelPicker() {
    modelPicker_->clear();
    for (const auto& model : availableModels())
        modelPicker_->addItem(model.label, model.id);
    // Servers saved in the settings (File › Connect to a server…), beside the local models.
    for (const auto& server : savedServerEngines())
        modelPicker_->addItem(server.label(), server.id());
    modelPicker_->setEnabled(modelPicker_->count() > 0 && controller_->engine());
    // The model in use stays shown, even one loaded from a path (not in the store's list).
    const auto loaded = controller_->loadedModel();
    if (!loaded.isEmpty() && modelPicker_->findData(loaded) < 0) modelPicker_->addItem(QStringLiteral("%1 (path)").arg(loaded), loaded);
    const auto shown = loaded.isEmpty() ? controller_->lastSessionModel() : loaded;
    if (const int row = modelPicker_->findData(shown); row >= 0) modelPicker_->setCurrentIndex(row);
}

void MainWindow::loadModel(const QString& modelIdOrPath) {
    controller_->loadModel(modelIdOrPath);
}

void MainWindow::translateNow() {
    controller_->translate();
}

void MainWindow::stopTranslation() {
    controller_->stop();
}

void MainWindow::translateDocument(const QString& path) {
    controller_->translateDocument(path);
}

void MainWindow::useAdapter(const QString& adapterIdOrPath) {
    if (!controller_->engine()) return;
    if (!adapterIdOrPath.isEmpty() && adapterPicker_->findData(adapterIdOrPath) < 0)
        adapterPicker_->addItem(QFileInfo(adapterIdOrPath).fileName(), adapterIdOrPath);
    controller_->useAdapter(adapterIdOrPath);
}

void MainWindow::swapLanguages() {
    controller_->swapLanguages();
}

bool MainWindow::mayHoldDocuments(const QList<QUrl>& urls) {
    // Cheap, for every drag move: a folder (searched only when dropped) or a document of a supported type.
    for (const auto& url : urls)
        if (url.isLocalFile() && (QFileInfo(url.toLocalFile()).isDir() || documents::formatOf(url.toLocalFile()))) return true;
    return false;
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
    if (event->mimeData()->hasUrls() && mayHoldDocuments(event->mimeData()->urls())) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
    if (!mayHoldDocuments(event->mimeData()->urls())) return;
    event->acceptProposedAction();
    QStringList paths;
    for (const auto& url : event->mimeData()->urls())
        if (url.isLocalFile()) paths << url.toLocalFile();
    confirmDocuments(paths);
}

// A folder holding many documents is asked about first: each gets a translated copy written beside it.
void MainWindow::confirmDocuments(const QStringList& paths) {
    const bool folder = std::any_of(paths.begin(), paths.end(), [](const QString& path) { return QFileInfo(path).isDir(); });
    if (!folder || !controller_->canTranslate()) {
        controller_->translateDocuments(paths);  // an empty drop, or one before a model, says so there
        return;
    }
    const auto documents = TranslationController::documentsIn(paths);  // searched once
    if (documents.isEmpty() || documents.size() <= kDocumentsWithoutAsking) {
        controller_->translateDocuments(documents.isEmpty() ? paths : documents);
        return;
    }
    auto* box = new QMessageBox(QMessageBox::Question, tr("Translate a folder"),
                                tr("The drop holds %1 documents. Translate every one? Each translation is written beside its "
                                   "document as a new file.")
                                    .arg(documents.size()),
                                QMessageBox::NoButton, this);
    box->setObjectName(QStringLiteral("confirmFolder"));
    box->setAttribute(Qt::WA_DeleteOnClose);
    auto* yes = box->addButton(tr("&Translate %1 documents").arg(documents.size()), QMessageBox::AcceptRole);
    box->addButton(QMessageBox::Cancel);
    box->setDefaultButton(QMessageBox::Cancel);
    connect(box, &QMessageBox::buttonClicked, this, [this, yes, documents](QAbstractButton* clicked) {
        if (clicked == yes) controller_->translateDocuments(documents);
    });
    box->open();
}

bool MainWindow::eventFilter(QObject* watched, QEvent* event) {
    if (event->type() == QEvent::DragEnter || event->type() == QEvent::DragMove || event->type() == QEvent::Drop) {
        const auto* drop = static_cast<QDropEvent*>(event);
        if (drop->mimeData()->hasUrls() && mayHoldDocuments(drop->mimeData()->urls())) {
            if (event->type() == QEvent::Drop)
                dropEvent(static_cast<QDropEvent*>(event));
            else
                static_cast<QDropEvent*>(event)->acceptProposedAction();
            return true;
        }
    }
    return QMainWindow::eventFilter(watched, event);
}

void MainWindow::chooseDocument() {
    const auto path =
        QFileDialog::getOpenFileName(this, tr("Translate a document"), {}, tr("Documents (%1)").arg(documents::supportedPatterns()));
    if (!path.isEmpty()) translateDocument(path);
}

void MainWindow::chooseAdapter() {
    const auto dir = QFileDialog::getExistingDirectory(this, tr("Add a LoRA adapter (a folder with adapter_config.json)"));
    if (!dir.isEmpty()) useAdapter(dir);
}

void MainWindow::copyOutput() {
    QApplication::clipboard()->setText(output_->toPlainText());
}

void MainWindow::clearPanes() {
    stopTranslation();
    source_->clear();
    output_->clear();
}

void MainWindow::showLanguages(const QString& from, const QString& to) {
    const QSignalBlocker blockFrom(from_), blockTo(to_);  // the controller already knows
    // "Detect language (German)" says what the last text was while it is the choice; plain again otherwise.
    if (const auto row = from_->findData(kDetectLanguage); row >= 0 && from != kDetectLanguage) {
        from_->setItemText(row, languageName(kDetectLanguage));
        from_->setItemData(row, tr("Each text's language is detected when it is translated"), Qt::ToolTipRole);
    }
    from_->setCurrentIndex(std::max(0, from_->findData(from)));
    to_->setCurrentIndex(std::max(0, to_->findData(to)));
    swap_->setEnabled(controller_->canSwap());
}

// A language picked on one side that the other side shows swaps the two; a pair the model cannot do is
// refused by the controller, and the pickers go back to what it has.
void MainWindow::pickLanguage(QComboBox* picker) {
    auto from = from_->currentData().toString(), to = to_->currentData().toString();
    if (from == to) {
        if (picker == from_)  // with "Detect language", the language it found takes the other side
            to = controller_->sourceLanguage() == kDetectLanguage ? controller_->detectedSource() : controller_->sourceLanguage();
        else
            from = controller_->targetLanguage();
    }
    controller_->setLanguages(from, to);
    showLanguages(controller_->sourceLanguage(), controller_->targetLanguage());
}

// What a person does goes to the controller.
void MainWindow::connectInput() {
    connect(translate_, &QPushButton::clicked, this, &MainWindow::translateNow);
    auto* shortcut = new QShortcut(QKeySequence(Qt::CTRL | Qt::Key_Return), this);
    connect(shortcut, &QShortcut::activated, this, &MainWindow::translateNow);
    connect(new QShortcut(QKeySequence(Qt::Key_Escape), this), &QShortcut::activated, this, &MainWindow::stopTranslation);
    connect(stop_, &QPushButton::clicked, this, &MainWindow::stopTranslation);
    connect(copy_, &QPushButton::clicked, this, &MainWindow::copyOutput);
    connect(clear_, &QPushButton::clicked, this, &MainWindow::clearPanes);
    connect(source_, &QPlainTextEdit::textChanged, this, [this] { controller_->setSourceText(source_->toPlainText()); });
    connect(asYouType_, &QCheckBox::toggled, controller_, &TranslationController::setTranslateAsYouType);
    for (auto* picker : {from_, to_})
        connect(picker, &QComboBox::currentIndexChanged, this, [this, picker] { pickLanguage(picker); });
    connect(modelPicker_, &QComboBox::activated, this, [this](int index) { loadModel(modelPicker_->itemData(index).toString()); });
    connect(cancelLoad_, &QPushButton::clicked, controller_, &TranslationController::cancelLoad);
    connect(adapterPicker_, &QComboBox::activated, this, [this](int index) { useAdapter(adapterPicker_->itemData(index).toString()); });
}

// What the controller says is shown.
void MainWindow::connectController() {
    showLanguages(controller_->sourceLanguage(), controller_->targetLanguage());
    asYouType_->setChecked(controller_->translatesAsYouType());
    connect(controller_, &TranslationController::languagesChanged, this, &MainWindow::showLanguages);
    // "Detect language" says what it found: "Detect language (German)", a guess marked as one.
    connect(controller_, &TranslationController::sourceDetected, this, [this](const QString& detected, bool sure, const QString& from) {
        const auto row = from_->findData(kDetectLanguage);
        if (row < 0) return;
        const auto shown = from.isEmpty() ? detected : from;
        from_->setItemText(row, shown.isEmpty() ? languageName(kDetectLanguage)
                                                : tr("Detect language (%1%2)").arg(languageName(shown), sure ? QString() : tr("?")));
        from_->setItemData(row,
                           shown.isEmpty() ? tr("Too little text to tell its language")
                           : sure          ? tr("Detected: %1 (%2)").arg(languageName(shown), shown)
                                           : tr("A guess from a few words or the script: %1 (%2)").arg(languageName(shown), shown),
                           Qt::ToolTipRole);
        swap_->setEnabled(controller_->canSwap());
    });
    connect(controller_, &TranslationController::languageChoicesChanged, this,
            [this](const QStringList& sources, const QStringList& targets) {
                fillLanguagePicker(from_, sources);
                fillLanguagePicker(to_, targets);
                showLanguages(controller_->sourceLanguage(), controller_->targetLanguage());
            });
    connect(controller_, &TranslationController::loadStarted, this, [this] {
        loadBar_->setValue(0);
        loadBar_->setVisible(true);
        cancelLoad_->setVisible(true);
    });
    connect(controller_, &TranslationController::loadProgress, this, [this](const QString& phase, double fraction) {
        loadBar_->setVisible(true);
        loadBar_->setValue(static_cast<int>(fraction * 100));
        loadBar_->setFormat(tr("Loading: %1 %p%").arg(phase));
    });
    connect(controller_, &TranslationController::modelLoaded, this, &MainWindow::onLoaded);
    connect(controller_, &TranslationController::loadFailed, this, [this](const QString& message) {
        loadBar_->setVisible(false);
        cancelLoad_->setVisible(false);
        // The previous model, if any, stays loaded and usable; the picker goes back to it.
        if (const auto loaded = controller_->loadedModel(); !loaded.isEmpty())
            modelPicker_->setCurrentIndex(std::max(0, modelPicker_->findData(loaded)));
        modelStatus_->setText(tr("Could not load the model: %1").arg(message));
    });
    connect(controller_, &TranslationController::instructionsChanged, this,
            [this](const QString& style, const QStringList& preferences, bool available) {
                instructions_->display(style, preferences);
                instructions_->setVisible(available);
                showPromptProfile();
            });
    connect(instructions_, &InstructionsBar::edited, controller_, &TranslationController::setInstructions);
    connect(controller_, &TranslationController::adapterChanged, this, [this](const QString& adapter) {
        adapterPicker_->setCurrentIndex(std::max(0, adapterPicker_->findData(adapter)));
        adapterStatus_->setText(adapter.isEmpty() ? QString() : tr("Adapter: %1").arg(QFileInfo(adapter).fileName()));
        adapterStatus_->setVisible(!adapter.isEmpty());
    });
    connect(controller_, &TranslationController::adapterFailed, this, [this](const QString& adapter, const QString& message) {
        if (const int failed = adapterPicker_->findData(adapter); failed > 0) adapterPicker_->removeItem(failed);
        // The adapter in use (or none) stays, and the picker says so.
        adapterPicker_->setCurrentIndex(std::max(0, adapterPicker_->findData(controller_->adapterInUse())));
        statusBar()->showMessage(tr("Could not apply the adapter: %1").arg(message), 10000);
    });
    connect(controller_, &TranslationController::translationStarted, output_, &QPlainTextEdit::clear);
    connect(controller_, &TranslationController::outputAppended, this, [this](const QString& delta) {
        // Append at the end without re-rendering the whole pane.
        QTextCursor cursor(output_->document());
        cursor.movePosition(QTextCursor::End);
        cursor.insertText(delta);
    });
    connect(controller_, &TranslationController::translationFinished, this, [this](const TranslationInfo& stats) {
        const double rate = stats.totalSeconds > 0 ? stats.generatedTokens / stats.totalSeconds : 0;
        translationStatus_->setText(tr("First token %1 s, %2 tokens/s").arg(stats.firstTokenSeconds, 0, 'f', 3).arg(rate, 0, 'f', 1));
        // The last translations' numbers, newest first, in the tooltip.
        history_.prepend(tr("%1  %2 → %3 tokens, first token %4 s, %5 tokens/s")
                             .arg(QTime::currentTime().toString(QStringLiteral("HH:mm:ss")))
                             .arg(stats.sourceTokens)
                             .arg(stats.generatedTokens)
                             .arg(stats.firstTokenSeconds, 0, 'f', 3)
                             .arg(rate, 0, 'f', 1));
        while (history_.size() > 10)
            history_.removeLast();
        translationStatus_->setToolTip(history_.join('\n'));
    });
    connect(controller_, &TranslationController::translationFailed, this,
            [this](const QString& message) { translationStatus_->setText(tr("Translation failed: %1").arg(message)); });
}

void MainWindow::connectDocuments() {
    setAcceptDrops(true);
    for (auto* pane : {source_, output_})
        pane->viewport()->installEventFilter(this);
    connect(controller_, &TranslationController::documentStarted, this, [this](const QString& path) {
        documentBar_->setValue(0);
        documentBar_->setFormat(tr("%1: %p%").arg(QFileInfo(path).fileName()));
        documentBar_->setVisible(true);
        const auto* queue = controller_->documentQueue();
        const auto to = queue->running() >= 0 ? queue->job(queue->running()).to : controller_->targetLanguage();
        documentStatus_->setText(tr("Translating %1 into %2…").arg(QFileInfo(path).fileName(), languageName(to)));
    });
    connect(controller_, &TranslationController::documentProgress, documentBar_, &QProgressBar::setValue);
    connect(controller_, &TranslationController::documentFinished, this, [this](const QString& output, int keptOriginal) {
        documentBar_->setVisible(controller_->documentRunning());
        auto status = tr("Saved the translation as %1").arg(output);
        // The model's empty answers, and text that did not read as its format says (translate-file warns of both).
        if (keptOriginal > 0) status += tr(" (%n passage(s) kept in the original)", nullptr, keptOriginal);
        documentStatus_->setText(status);
    });
    connect(controller_, &TranslationController::documentFailed, this, [this](const QString& message) {
        documentBar_->setVisible(controller_->documentRunning());
        documentStatus_->setText(tr("Document not translated: %1").arg(message));
    });
}

void MainWindow::fillAdapterPicker(const QString& baseId) {
    adapterPicker_->clear();
    adapterPicker_->addItem(tr("No adapter"), QString());
    for (const auto& adapter : availableAdapters(baseId))
        adapterPicker_->addItem(adapter.label, adapter.id);
    adapterPicker_->setEnabled(controller_->engine() != nullptr);
}

void MainWindow::onLoaded(const ModelInfo& info, const LoadInfo& stats) {
    loadBar_->setVisible(false);
    cancelLoad_->setVisible(false);
    // A new model starts without an adapter, and the picker offers the adapters made for it.
    fillAdapterPicker(info.id);
    adapterPicker_->setCurrentIndex(0);
    adapterStatus_->setVisible(false);
    if (modelPicker_->findData(info.id) < 0)
        modelPicker_->addItem(QStringLiteral("%1 (%2, path)").arg(info.id, info.architecture), info.id);
    modelPicker_->setCurrentIndex(modelPicker_->findData(info.id));
    modelPicker_->setEnabled(true);
    translate_->setEnabled(true);
    editServer_->setEnabled(isServerEngineId(info.id));
    if (isServerEngineId(info.id))
        modelStatus_->setText(tr("Translating on %1: %2 at %3, connected in %4 s")
                                  .arg(info.id.mid(7), info.architecture.section('/', -1), info.device)
                                  .arg(stats.readySeconds, 0, 'f', 2));
    else
        modelStatus_->setText(
            tr("Model %1 (%2) on %3, loaded in %4 s").arg(info.id, info.architecture, info.device).arg(stats.readySeconds, 0, 'f', 2));
}

void MainWindow::buildUi() {
    from_ = makeLanguagePicker(tr("Source language"));
    to_ = makeLanguagePicker(tr("Target language"));
    fillLanguagePicker(from_, controller_->languageChoices().sources);
    fillLanguagePicker(to_, controller_->languageChoices().targets);
    swap_ = new QToolButton;
    swap_->setText(QStringLiteral("⇄"));
    swap_->setToolTip(tr("Swap languages"));
    swap_->setAccessibleName(tr("Swap languages"));
    connect(swap_, &QToolButton::clicked, this, &MainWindow::swapLanguages);
    translate_ = new QPushButton(tr("Translate"));
    translate_->setAccessibleName(tr("Translate"));
    translate_->setToolTip(tr("Translate (Ctrl+Enter)"));
    stop_ = new QPushButton(tr("Stop"));
    stop_->setAccessibleName(tr("Stop translating"));
    stop_->setToolTip(tr("Stop (Esc)"));
    copy_ = new QPushButton(tr("Copy"));
    copy_->setAccessibleName(tr("Copy the translation"));
    clear_ = new QPushButton(tr("Clear"));
    clear_->setAccessibleName(tr("Clear both panes"));
    asYouType_ = new QCheckBox(tr("Translate as you type"));
    asYouType_->setAccessibleName(tr("Translate as you type"));
    asYouType_->setChecked(true);
    modelPicker_ = new QComboBox;
    modelPicker_->setAccessibleName(tr("Model"));
    modelPicker_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    modelPicker_->setMinimumContentsLength(22);
    fillModelPicker();
    adapterPicker_ = new QComboBox;
    adapterPicker_->setAccessibleName(tr("Adapter"));
    adapterPicker_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    adapterPicker_->setMinimumContentsLength(14);
    adapterPicker_->setToolTip(tr("A LoRA adapter applied on top of the model, without reloading it"));
    fillAdapterPicker();
    instructions_ = new InstructionsBar;
    instructions_->setVisible(false);
    cancelLoad_ = new QPushButton(tr("Cancel loading"));
    cancelLoad_->setAccessibleName(tr("Cancel loading the model"));
    cancelLoad_->setVisible(false);

    auto* pickers = new QHBoxLayout;
    auto* fromLabel = new QLabel(tr("Fr&om:"));
    fromLabel->setBuddy(from_);
    pickers->addWidget(fromLabel);
    pickers->addWidget(from_, 1);
    pickers->addWidget(swap_);
    auto* toLabel = new QLabel(tr("&To:"));
    toLabel->setBuddy(to_);
    pickers->addWidget(toLabel);
    pickers->addWidget(to_, 1);
    pickers->addStretch(1);
    pickers->addWidget(translate_);
    pickers->addWidget(stop_);
    pickers->addWidget(copy_);
    pickers->addWidget(clear_);
    auto* models = new QHBoxLayout;
    auto* modelLabel = new QLabel(tr("&Model:"));
    modelLabel->setBuddy(modelPicker_);
    models->addWidget(modelLabel);
    models->addWidget(modelPicker_, 1);
    auto* adapterLabel = new QLabel(tr("&Adapter:"));
    adapterLabel->setBuddy(adapterPicker_);
    models->addWidget(adapterLabel);
    models->addWidget(adapterPicker_);
    // A way of working rather than an action: beside the model, so the actions' row stays short at large font sizes.
    models->addWidget(asYouType_);

    source_ = new QPlainTextEdit;
    source_->setAccessibleName(tr("Source text"));
    source_->setPlaceholderText(tr("Type or paste text to translate, or drop a document on the window"));
    // Tab moves on to the next control, so the keyboard never stays trapped in a pane (a tab character still pastes).
    source_->setTabChangesFocus(true);
    output_ = new QPlainTextEdit;
    output_->setReadOnly(true);
    output_->setTabChangesFocus(true);
    // A part of the translation can be selected and copied from the keyboard too.
    output_->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    // The pane with the keyboard's focus has a highlighted border.
    auto* focusFrame = new FocusFrameStyle;
    focusFrame->setParent(this);
    for (auto* pane : {source_, output_})
        pane->setStyle(focusFrame);
    output_->setAccessibleName(tr("Translation"));
    output_->setPlaceholderText(tr("The translation appears here"));
    auto* panes = panes_ = new QSplitter(Qt::Horizontal);
    panes->setObjectName(QStringLiteral("panes"));
    panes->addWidget(source_);
    panes->addWidget(output_);
    documentPanel_ = new DocumentPanel(controller_);
    // The panes above, the documents below; the documents' share grows when the panel shows.
    auto* body = body_ = new QSplitter(Qt::Vertical);
    body->setObjectName(QStringLiteral("body"));
    body->addWidget(panes);
    body->addWidget(documentPanel_);
    body->setStretchFactor(0, 3);
    body->setStretchFactor(1, 1);

    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    layout->addLayout(models);
    layout->addLayout(pickers);
    layout->addWidget(instructions_);
    layout->addWidget(body, 1);
    setCentralWidget(central);

    auto* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("Translate &document…"), QKeySequence::Open, this, &MainWindow::chooseDocument);
    file->addAction(tr("&Models…"), QKeySequence(Qt::CTRL | Qt::Key_M), this, &MainWindow::manageModels);
    file->addAction(tr("Make a smaller, faster &copy…"), this, [this] { manageModels()->offerSmallerCopy(); });
    file->addAction(tr("Add &adapter…"), this, &MainWindow::chooseAdapter);
    file->addAction(tr("Connect to a &server…"), this, &MainWindow::connectToServer);
    editServer_ = file->addAction(tr("&Edit this server…"), this, &MainWindow::editServer);
    editServer_->setEnabled(false);
    buildSettingsMenu();
    auto* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About Dragoman"), this, [this] { showAboutDialog(this); });

    modelStatus_ = new QLabel;
    modelStatus_->setAccessibleName(tr("Model status"));
    modelStatus_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    statusBar()->addWidget(modelStatus_, 1);
    adapterStatus_ = new QLabel;
    adapterStatus_->setAccessibleName(tr("Adapter in use"));
    adapterStatus_->setVisible(false);
    statusBar()->addWidget(adapterStatus_);
    translationStatus_ = new QLabel;
    translationStatus_->setAccessibleName(tr("Last translation"));
    statusBar()->addWidget(translationStatus_);
    loadBar_ = new QProgressBar;
    loadBar_->setAccessibleName(tr("Model loading progress"));
    loadBar_->setRange(0, 100);
    loadBar_->setVisible(false);
    statusBar()->addPermanentWidget(loadBar_);
    statusBar()->addPermanentWidget(cancelLoad_);
    documentStatus_ = new QLabel(tr("Drop a document here to translate it."));
    documentStatus_->setAccessibleName(tr("Document translation"));
    documentStatus_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    statusBar()->addWidget(documentStatus_);
    documentBar_ = new QProgressBar;
    documentBar_->setAccessibleName(tr("Document translation progress"));
    documentBar_->setRange(0, 100);
    documentBar_->setVisible(false);
    statusBar()->addPermanentWidget(documentBar_);
}

ModelManagerDialog* MainWindow::manageModels() {
    // One manager: a second Ctrl+M raises it (two could run store operations at once).
    if (!modelManager_) {
        modelManager_ = new ModelManagerDialog(this);
        modelManager_->setAttribute(Qt::WA_DeleteOnClose);
        connect(modelManager_, &ModelManagerDialog::storeChanged, this, &MainWindow::fillModelPicker);
        connect(modelManager_, &ModelManagerDialog::useModel, this, &MainWindow::loadModel);
        connect(controller_, &TranslationController::modelLoaded, modelManager_,
                [this] { modelManager_->setModelInUse(controller_->loadedModel()); });
    }
    modelManager_->setModelInUse(controller_->loadedModel());
    modelManager_->selectModel(controller_->loadedModel());
    modelManager_->show();
    modelManager_->raise();
    modelManager_->activateWindow();
    return modelManager_;
}

void MainWindow::showNoModel() {
    translate_->setEnabled(false);
    modelStatus_->setText(
        tr("No model is installed. Add one with File › Models… › Import folder…, or: dragoman-cli models import "
           "/path/to/model-folder"));
}

}  // namespace dragoman
