#pragma once
// File › Models…: every model and adapter the store knows (bundled, imported, our cache, the Hugging Face cache)
// and every saved server, with its kind, languages, size, source, folder (or address) and adapters; import a
// folder (hashed once, with progress and Cancel), add a server, verify quickly or fully (a server: connect and ask),
// make a smaller, faster int8 or FP8 copy, forget an import or a server (its folder is never touched), open its
// folder, use it.
#include <QDialog>

class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace dragoman {

class ModelTasks;

class ModelManagerDialog : public QDialog {
    Q_OBJECT
public:
    explicit ModelManagerDialog(QWidget* parent = nullptr);

    QTableWidget* table() const { return table_; }
    QLabel* message() const { return message_; }
    QPushButton* forgetButton() const { return forget_; }
    QPushButton* verifyButton() const { return verify_; }
    QPushButton* addServerButton() const { return addServer_; }
    QPushButton* useButton() const { return use_; }
    // The selected row's model id (empty: none).
    QString selectedId() const;
    bool selectModel(const QString& id);
    // Import… after its folder dialog; also what tests call.
    void importFolder(const QString& folder);
    void verifySelected(bool full);
    void forgetSelected();
    // A smaller, faster copy of the selected model with `type` ("int8" or "fp8") weights, registered beside it.
    void quantizeSelected(const QString& type);
    // The copy's type menu, at its button (File › Make a smaller, faster copy…).
    void offerSmallerCopy();
    QPushButton* smallerCopyButton() const { return smaller_; }
    // The model the window has loaded: it cannot be forgotten from under it.
    void setModelInUse(const QString& id);

protected:
    // Closing while an import or a verification runs cancels it first (the dialog stays until it has ended).
    void reject() override;

Q_SIGNALS:
    // "Use this model": the window loads it.
    void useModel(const QString& id);
    // The store changed (an import or a forget): the window's model picker lists it again.
    void storeChanged();

private:
    void refresh();
    void updateButtons();
    void setBusy(bool busy);

    ModelTasks* tasks_ = nullptr;
    QTableWidget* table_ = nullptr;
    QLabel* message_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QPushButton* import_ = nullptr;
    QPushButton* addServer_ = nullptr;
    QPushButton* verify_ = nullptr;
    QPushButton* verifyFull_ = nullptr;
    QPushButton* forget_ = nullptr;
    QPushButton* smaller_ = nullptr;
    QPushButton* openFolder_ = nullptr;
    QPushButton* use_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QString inUse_;
    bool changesStore_ = false;  // the running task adds a model: the window's model picker lists again when it ends
};

}  // namespace dragoman
