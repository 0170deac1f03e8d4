#pragma once
// File › Connect to a server…: a server to translate on (dragoman-cli serve, vLLM, SGLang), saved beside local
// models in the picker: its address, the model (chosen from the server's /v1/models), the API key's file or
// environment variable (never the key itself), a timeout, and a connection test that translates a word and
// says plainly what happened. Network work runs on a thread of its own: the window never waits.
#include "remote/server_engines.h"

#include <QDialog>

#include <functional>
#include <optional>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QThread;

namespace dragoman {

class ServerDialog : public QDialog {
    Q_OBJECT
public:
    // `existing`: edit that server (a Remove button appears); none: a new one.
    explicit ServerDialog(const std::optional<ServerEngine>& existing = std::nullopt, QWidget* parent = nullptr);
    // A test still running goes on to its end (bounded by the timeout) on its own and then deletes itself.
    ~ServerDialog() override;

    // What the fields say now.
    ServerEngine engine() const;
    // Accepted through Remove: the server was taken out of the settings.
    bool removed() const { return removed_; }

    QLineEdit* nameField() const { return name_; }
    QLineEdit* urlField() const { return url_; }
    QComboBox* modelPicker() const { return model_; }
    QComboBox* keySource() const { return keySource_; }  // data: "", "file", "env"
    QLineEdit* keyField() const { return key_; }
    QPushButton* listButton() const { return list_; }
    QPushButton* testButton() const { return test_; }
    QLabel* verdict() const { return verdict_; }

public Q_SLOTS:
    void listModels();
    void testConnection();
    void accept() override;

Q_SIGNALS:
    void modelsListed(int count);  // also 0 after a failure (verdict() says why)
    void testFinished(bool ok);

private:
    // Runs `work` on a thread of its own; `done` gets its result (or error) back on this dialog's thread.
    void runInBackground(std::function<QString()> work, std::function<void(bool ok, const QString& text)> done);

    QLineEdit *name_, *url_, *key_;
    QComboBox *model_, *keySource_;
    QSpinBox* timeout_;
    QPushButton *list_, *test_;
    QLabel* verdict_;
    bool removed_ = false;
    bool editing_ = false;
    QList<QThread*> running_;  // background work started and not yet reported
};

}  // namespace dragoman
