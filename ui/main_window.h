#pragma once
// The main window: source pane, output pane, language pickers and a status bar. It only collects input
// and shows results; translation logic lives in app/.
#include <QMainWindow>

class QComboBox;
class QLabel;
class QPlainTextEdit;
class QPushButton;
class QToolButton;

namespace dragoman {

class MainWindow : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    QPlainTextEdit* sourcePane() const { return source_; }
    QPlainTextEdit* outputPane() const { return output_; }
    QComboBox* fromPicker() const { return from_; }
    QComboBox* toPicker() const { return to_; }
    QLabel* modelStatus() const { return modelStatus_; }

public Q_SLOTS:
    void swapLanguages();

private:
    void buildUi();
    void showNoModel();

    QPlainTextEdit* source_ = nullptr;
    QPlainTextEdit* output_ = nullptr;
    QComboBox* from_ = nullptr;
    QComboBox* to_ = nullptr;
    QToolButton* swap_ = nullptr;
    QPushButton* translate_ = nullptr;
    QLabel* modelStatus_ = nullptr;
};

}  // namespace dragoman
