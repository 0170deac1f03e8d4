#pragma once
// The main window: source pane, output pane, language, model and adapter pickers, and a status bar. It is a
// view: what a person does goes to a TranslationController (app/translation_controller.h), and what the
// controller says is shown. The window keeps only its own geometry and font.
#include <QMainWindow>
#include <QPointer>

#include <optional>

class QAction;
class QDragEnterEvent;
class QDropEvent;
class QUrl;
class QActionGroup;
class QCheckBox;
class QFont;
class QComboBox;
class QProgressBar;
class QLabel;
class QSplitter;
class QTimer;
class QPlainTextEdit;
class QPushButton;
class QToolButton;

namespace dragoman {

class DocumentPanel;
class ModelManagerDialog;

class InstructionsBar;
struct ServerEngine;
class TranslationController;
struct ModelInfo;
struct LoadInfo;
struct TranslationInfo;

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    static constexpr int kDocumentsWithoutAsking = 20;  // documents of a dropped folder translated without asking
    // `controller` must outlive the window; none: the window makes one without an engine (nothing can be
    // translated, as when no model is installed).
    explicit MainWindow(TranslationController* controller = nullptr, QWidget* parent = nullptr);
    TranslationController* controller() const { return controller_; }

    // Loads a model in the background, with the progress bar in the status bar.
    void loadModel(const QString& modelIdOrPath);
    QPushButton* translateButton() const { return translate_; }
    QProgressBar* loadBar() const { return loadBar_; }

    QPlainTextEdit* sourcePane() const { return source_; }
    QPlainTextEdit* outputPane() const { return output_; }
    QComboBox* fromPicker() const { return from_; }
    QComboBox* toPicker() const { return to_; }
    QToolButton* swapButton() const { return swap_; }
    QLabel* modelStatus() const { return modelStatus_; }
    QLabel* translationStatus() const { return translationStatus_; }
    QComboBox* modelPicker() const { return modelPicker_; }
    // "No adapter", then the store's LoRA adapters; data = adapter id or folder ("" for none).
    QComboBox* adapterPicker() const { return adapterPicker_; }
    QLabel* adapterStatus() const { return adapterStatus_; }
    // Style and preferences, shown for models whose prompts take them (Hy-MT2).
    InstructionsBar* instructions() const { return instructions_; }
    QCheckBox* translateAsYouType() const { return asYouType_; }
    // Settings > Compute threads: one checkable action per choice, data = thread count (0: automatic).
    QList<QAction*> threadActions() const;
    // Settings > Prompts: automatic (data ""), HY-MT1.5, Hy-MT2; enabled for models with prompts.
    QList<QAction*> promptProfileActions() const;
    // A dropped or chosen document's job: its progress bar and the line that names the translated copy.
    QProgressBar* documentBar() const { return documentBar_; }
    QLabel* documentStatus() const { return documentStatus_; }
    DocumentPanel* documentPanel() const { return documentPanel_; }
    // The local files among `urls` that translate-file reads; empty when there are none.

    static bool mayHoldDocuments(const QList<QUrl>& urls);

public Q_SLOTS:
    void swapLanguages();
    void translateNow();
    void stopTranslation();
    void copyOutput();
    void clearPanes();
    // The font of both panes (Settings > Font…), remembered across restarts.
    void setPaneFont(const QFont& font);
    void chooseFont();
    // Translates a document beside itself (File > Translate document…, or dropped on the window).
    void translateDocument(const QString& path);
    void chooseDocument();
    // Dropped files and folders: translated, after asking where a folder holds more than kDocumentsWithoutAsking
    // documents (the box is asynchronous, named "confirmFolder").
    void confirmDocuments(const QStringList& paths);
    // Applies a LoRA adapter folder or id on top of the loaded model (File > Add adapter…): no reload; the text
    // shown is translated again with it.
    void useAdapter(const QString& adapterIdOrPath);
    void chooseAdapter();
    // File › Models…: the model manager, open beside the window (returned for tests).
    ModelManagerDialog* manageModels();
    // File › Connect to a server… (a new one) and File › Edit this server… (the one in use): saved servers are
    // listed in the model picker; a saved one is connected to at once.
    void connectToServer();
    void editServer();

protected:
    void closeEvent(QCloseEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void moveEvent(QMoveEvent* event) override;
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;
    // Document drops on the text panes go to the window rather than into the text.
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    void buildUi();
    void showNoModel();
    void connectInput();
    void connectController();
    void showLanguages(const QString& from, const QString& to);
    void pickLanguage(QComboBox* picker);
    void onLoaded(const ModelInfo& info, const LoadInfo& stats);
    void fillModelPicker();
    void fillAdapterPicker(const QString& baseId = {});
    void restoreSettings();
    void saveSettings() const;
    void buildSettingsMenu();
    void connectDocuments();

    TranslationController* controller_ = nullptr;
    QProgressBar* loadBar_ = nullptr;

    QPlainTextEdit* source_ = nullptr;
    QPlainTextEdit* output_ = nullptr;
    QTimer* saveGeometrySoon_ = nullptr;
    QSplitter* panes_ = nullptr;  // source | output
    QSplitter* body_ = nullptr;   // panes over the document list
    QStringList history_;         // the last translations' numbers, for the status bar's tooltip
    bool settingsRestored_ = false;
    bool firstRun_ = false;
    bool closeConfirmed_ = false;  // the person chose to quit with documents still in the list
    QComboBox* from_ = nullptr;
    QComboBox* to_ = nullptr;
    QToolButton* swap_ = nullptr;
    QPushButton* translate_ = nullptr;
    QLabel* modelStatus_ = nullptr;        // model, architecture, device, load time
    QLabel* translationStatus_ = nullptr;  // time to first token and tokens/s of the last translation
    QComboBox* modelPicker_ = nullptr;
    QComboBox* adapterPicker_ = nullptr;
    QLabel* adapterStatus_ = nullptr;
    InstructionsBar* instructions_ = nullptr;
    QPushButton* cancelLoad_ = nullptr;
    QPushButton* stop_ = nullptr;
    QPushButton* copy_ = nullptr;
    QPushButton* clear_ = nullptr;
    QCheckBox* asYouType_ = nullptr;
    QActionGroup* threads_ = nullptr;
    QActionGroup* profiles_ = nullptr;
    QAction* editServer_ = nullptr;
    void runServerDialog(const std::optional<ServerEngine>& existing);
    void showPromptProfile();
    QProgressBar* documentBar_ = nullptr;
    QLabel* documentStatus_ = nullptr;
    DocumentPanel* documentPanel_ = nullptr;
    QPointer<ModelManagerDialog> modelManager_;
};

}  // namespace dragoman
