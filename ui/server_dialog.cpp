#include "server_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QMessageBox>
#include <QPushButton>
#include <QSpinBox>
#include <QThread>
#include <QVBoxLayout>

#include <chrono>
#include <memory>

namespace dragoman {

ServerDialog::ServerDialog(const std::optional<ServerEngine>& existing, QWidget* parent) : QDialog(parent) {
    setWindowTitle(existing ? tr("Server %1").arg(existing->name) : tr("Connect to a server"));
    name_ = new QLineEdit;
    name_->setPlaceholderText(tr("gpu-box"));
    name_->setAccessibleName(tr("Server name"));
    url_ = new QLineEdit;
    url_->setPlaceholderText(QStringLiteral("http://gpu-box:8000"));
    url_->setAccessibleName(tr("Server address"));
    model_ = new QComboBox;
    model_->setEditable(true);
    model_->setMinimumContentsLength(28);
    model_->setAccessibleName(tr("Model on the server"));
    model_->lineEdit()->setPlaceholderText(tr("The server's first model"));
    list_ = new QPushButton(tr("&List models"));
    keySource_ = new QComboBox;
    keySource_->addItem(tr("No API key"), QString());
    keySource_->addItem(tr("Read from a file"), QStringLiteral("file"));
    keySource_->addItem(tr("Read from an environment variable"), QStringLiteral("env"));
    keySource_->setAccessibleName(tr("Where the API key comes from"));
    key_ = new QLineEdit;
    key_->setAccessibleName(tr("API key file or variable"));
    auto* browse = new QPushButton(tr("&Browse…"));
    timeout_ = new QSpinBox;
    timeout_->setRange(5, 600);
    timeout_->setSuffix(tr(" s"));
    timeout_->setValue(60);
    timeout_->setToolTip(tr("A request fails when the server sends nothing for this long"));
    test_ = new QPushButton(tr("&Test connection"));
    verdict_ = new QLabel;
    verdict_->setWordWrap(true);
    verdict_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    verdict_->setAccessibleName(tr("Connection test result"));

    auto* modelRow = new QHBoxLayout;
    modelRow->addWidget(model_, 1);
    modelRow->addWidget(list_);
    auto* keyRow = new QHBoxLayout;
    keyRow->addWidget(keySource_);
    keyRow->addWidget(key_, 1);
    keyRow->addWidget(browse);
    auto* form = new QFormLayout;
    form->addRow(tr("&Name:"), name_);
    form->addRow(tr("&Address:"), url_);
    form->addRow(tr("&Model:"), modelRow);
    form->addRow(tr("API &key:"), keyRow);
    form->addRow(tr("T&imeout:"), timeout_);
    auto* buttons = new QDialogButtonBox(QDialogButtonBox::Save | QDialogButtonBox::Cancel);
    if (existing) {
        auto* remove = buttons->addButton(tr("&Remove"), QDialogButtonBox::DestructiveRole);
        connect(remove, &QPushButton::clicked, this, [this, name = existing->name] {
            removeServerEngine(name);
            removed_ = true;
            QDialog::accept();
        });
    }
    auto* layout = new QVBoxLayout(this);
    layout->addLayout(form);
    layout->addWidget(test_, 0, Qt::AlignLeft);
    layout->addWidget(verdict_);
    layout->addWidget(buttons);

    auto updateKey = [this, browse] {
        const auto source = keySource_->currentData().toString();
        key_->setEnabled(!source.isEmpty());
        browse->setVisible(source == QLatin1String("file"));
        key_->setPlaceholderText(source == QLatin1String("env") ? QStringLiteral("GPU_BOX_API_KEY") : tr("~/.config/gpu-box.key"));
    };
    connect(keySource_, &QComboBox::currentIndexChanged, this, updateKey);
    connect(browse, &QPushButton::clicked, this, [this] {
        const auto file = QFileDialog::getOpenFileName(this, tr("The file that holds the API key"));
        if (!file.isEmpty()) key_->setText(file);
    });
    connect(list_, &QPushButton::clicked, this, &ServerDialog::listModels);
    connect(test_, &QPushButton::clicked, this, &ServerDialog::testConnection);
    connect(buttons, &QDialogButtonBox::accepted, this, &ServerDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    editing_ = existing.has_value();
    if (existing) {
        name_->setText(existing->name);
        name_->setReadOnly(true);  // the picker and the settings know it by its name
        url_->setText(existing->url);
        model_->setCurrentText(existing->model);
        keySource_->setCurrentIndex(!existing->keyFile.isEmpty() ? 1 : !existing->keyVariable.isEmpty() ? 2 : 0);
        key_->setText(!existing->keyFile.isEmpty() ? existing->keyFile : existing->keyVariable);
        timeout_->setValue(existing->timeoutSeconds);
    }
    updateKey();
}

ServerDialog::~ServerDialog() {
    for (auto* thread : running_) {
        disconnect(thread, nullptr, this, nullptr);
        if (thread->isFinished())
            thread->deleteLater();
        else
            connect(thread, &QThread::finished, thread, &QObject::deleteLater);
    }
}

ServerEngine ServerDialog::engine() const {
    ServerEngine e;
    e.name = name_->text().trimmed();
    e.url = url_->text().trimmed();
    e.model = model_->currentText().trimmed();
    const auto source = keySource_->currentData().toString();
    if (source == QLatin1String("file")) e.keyFile = key_->text().trimmed();
    if (source == QLatin1String("env")) e.keyVariable = key_->text().trimmed();
    e.timeoutSeconds = timeout_->value();
    return e;
}

void ServerDialog::runInBackground(std::function<QString()> work, std::function<void(bool, const QString&)> done) {
    list_->setEnabled(false);
    test_->setEnabled(false);
    auto result = std::make_shared<std::pair<bool, QString>>();
    QThread* thread = QThread::create([work = std::move(work), result] {
        try {
            *result = {true, work()};
        } catch (const std::exception& e) {
            *result = {false, QString::fromUtf8(e.what())};
        }
    });
    running_ << thread;
    connect(thread, &QThread::finished, this, [this, thread, result, done = std::move(done)] {
        running_.removeOne(thread);
        thread->deleteLater();
        list_->setEnabled(true);
        test_->setEnabled(true);
        done(result->first, result->second);
    });
    thread->start();
}

void ServerDialog::listModels() {
    const auto e = engine();
    verdict_->setText(tr("Asking %1 for its models…").arg(e.url));
    auto found = std::make_shared<QStringList>();
    runInBackground(
        [e, found] {
            for (const auto& m : listServerModels(remoteSettingsOf(e)))
                *found << m.id;
            return QString();
        },
        [this, found](bool ok, const QString& error) {
            if (!ok) {
                verdict_->setText(tr("Could not list the models: %1").arg(error));
                Q_EMIT modelsListed(0);
                return;
            }
            const auto current = model_->currentText();
            model_->clear();
            model_->addItems(*found);
            model_->setCurrentText(current.isEmpty() || !found->contains(current) ? found->value(0) : current);
            verdict_->setText(tr("%n model(s) on the server.", nullptr, static_cast<int>(found->size())));
            Q_EMIT modelsListed(static_cast<int>(found->size()));
        });
}

void ServerDialog::testConnection() {
    const auto e = engine();
    verdict_->setText(tr("Connecting to %1…").arg(e.url));
    runInBackground(
        [e] {
            const auto start = std::chrono::steady_clock::now();
            const RemoteEngine server(remoteSettingsOf(e));
            // A real translation, the way the window will ask for one.
            TranslationRequest probe{"Hello.", "en", server.targetLanguages().empty() ? "de" : server.targetLanguages().front(), 1, 0, {}};
            for (const auto& code : server.targetLanguages())
                if (code == "de") probe.to = "de";
            const auto answer = server.translate(probe);
            const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
            return tr("Connected: %1 translated \"Hello.\" into %2 as \"%3\" in %4 s.")
                .arg(server.model(), QString::fromStdString(probe.to), QString::fromStdString(answer).left(80))
                .arg(seconds, 0, 'f', 2);
        },
        [this](bool ok, const QString& text) {
            verdict_->setText(ok ? text : tr("Not working: %1").arg(text));
            Q_EMIT testFinished(ok);
        });
}

void ServerDialog::accept() {
    if (!editing_ && savedServerEngine(engine().name) &&
        QMessageBox::question(this, windowTitle(), tr("A server named %1 is saved already. Replace it?").arg(engine().name)) !=
            QMessageBox::Yes)
        return;
    try {
        saveServerEngine(engine());
    } catch (const std::exception& e) {
        verdict_->setText(QString::fromUtf8(e.what()));
        return;
    }
    QDialog::accept();
}

}  // namespace dragoman
