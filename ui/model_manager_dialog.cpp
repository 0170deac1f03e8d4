#include "model_manager_dialog.h"

#include "language_choices.h"
#include "model_tasks.h"
#include "server_dialog.h"

#include <QDesktopServices>

#include <QDialogButtonBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenu>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <utility>

namespace dragoman {
namespace {

enum Column { IdColumn, KindColumn, LanguagesColumn, SizeColumn, SourceColumn, AdaptersColumn, FolderColumn, ColumnCount };

// Every language by name, for the languages column's tooltip.
QString languagesTooltip(const StoredModel& model) {
    QStringList names;
    for (const auto& code : model.targets)
        names << QStringLiteral("%1 (%2)").arg(languageName(code), code);
    if (!names.isEmpty())
        return (model.fixedFrom.isEmpty() || model.fixedFrom == QLatin1String("mul") ? ModelManagerDialog::tr("From and into: %1")
                                                                                     : ModelManagerDialog::tr("Into: %1"))
            .arg(names.join(QStringLiteral(", ")));
    return languagesSummary(model);
}

QString sizeText(quint64 bytes) {
    if (bytes >= 1000ull * 1000 * 1000) return QString::number(bytes / 1e9, 'f', 1) + QStringLiteral(" GB");
    return QString::number(bytes / 1e6, 'f', 1) + QStringLiteral(" MB");
}

}  // namespace

ModelManagerDialog::ModelManagerDialog(QWidget* parent) : QDialog(parent), tasks_(new ModelTasks(this)) {
    setWindowTitle(tr("Models"));
    table_ = new QTableWidget(0, ColumnCount);
    table_->setAccessibleName(tr("Models and adapters"));
    table_->setHorizontalHeaderLabels(
        {tr("Model"), tr("Kind"), tr("Languages"), tr("Size"), tr("Source"), tr("Adapters"), tr("Folder or address")});
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    table_->verticalHeader()->setVisible(false);
    table_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setStretchLastSection(true);

    import_ = new QPushButton(tr("&Import folder…"));
    import_->setToolTip(tr("Register a model folder in Hugging Face layout where it is (nothing is copied); its files are hashed once"));
    addServer_ = new QPushButton(tr("Add se&rver…"));
    addServer_->setToolTip(
        tr("Translate on an OpenAI-compatible server (vLLM, SGLang, another Dragoman): listed here and in the "
           "window's model picker"));
    verify_ = new QPushButton(tr("&Verify"));
    verify_->setToolTip(tr("Check every file's size and time against the record made at import"));
    verifyFull_ = new QPushButton(tr("Re-&hash all"));
    verifyFull_->setToolTip(tr("Hash every file again"));
    forget_ = new QPushButton(tr("&Forget"));
    forget_->setToolTip(tr("Forget an imported model; its folder is left as it is"));
    smaller_ = new QPushButton(tr("Make a &smaller, faster copy…"));
    // Its tooltip follows the selection (updateButtons).
    auto* types = new QMenu(smaller_);
    types->addAction(tr("&int8 (recommended on CPUs)"), this, [this] { quantizeSelected(QStringLiteral("int8")); });
    types->addAction(tr("int8 weights and &activations (W8A8: fastest on CPUs, numbers a little further off)"), this,
                     [this] { quantizeSelected(QStringLiteral("w8a8")); });
    types->addAction(tr("&FP8 (E4M3, as GPU releases use)"), this, [this] { quantizeSelected(QStringLiteral("fp8")); });
    smaller_->setMenu(types);
    openFolder_ = new QPushButton(tr("&Open folder"));
    use_ = new QPushButton(tr("&Use this model"));
    cancel_ = new QPushButton(tr("&Cancel"));
    cancel_->setVisible(false);
    progress_ = new QProgressBar;
    progress_->setRange(0, 1000);
    progress_->setAccessibleName(tr("Progress of the model operation"));
    progress_->setVisible(false);
    message_ = new QLabel;
    message_->setWordWrap(true);
    message_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    message_->setAccessibleName(tr("Result of the model operation"));

    auto* actions = new QHBoxLayout;
    for (auto* button : {import_, addServer_, verify_, verifyFull_, smaller_, forget_, openFolder_, use_})
        actions->addWidget(button);
    actions->addStretch(1);
    auto* busy = new QHBoxLayout;
    busy->addWidget(progress_, 1);
    busy->addWidget(cancel_);
    auto* close = new QDialogButtonBox(QDialogButtonBox::Close);
    auto* layout = new QVBoxLayout(this);
    layout->addWidget(table_, 1);
    layout->addLayout(actions);
    layout->addLayout(busy);
    layout->addWidget(message_);
    layout->addWidget(close);
    resize(960, 420);

    connect(close, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(import_, &QPushButton::clicked, this, [this] {
        const auto folder = QFileDialog::getExistingDirectory(this, tr("Import a model folder"));
        if (!folder.isEmpty()) importFolder(folder);
    });
    connect(addServer_, &QPushButton::clicked, this, [this] {
        ServerDialog dialog(std::nullopt, this);
        if (dialog.exec() != QDialog::Accepted) return;
        refresh();
        selectModel(dialog.engine().id());
        message_->setText(tr("Added the server %1; Verify connects to it.").arg(dialog.engine().name));
        Q_EMIT storeChanged();
    });
    connect(verify_, &QPushButton::clicked, this, [this] { verifySelected(false); });
    connect(verifyFull_, &QPushButton::clicked, this, [this] { verifySelected(true); });
    connect(forget_, &QPushButton::clicked, this, &ModelManagerDialog::forgetSelected);
    connect(openFolder_, &QPushButton::clicked, this, [this] {
        if (const auto row = table_->currentRow(); row >= 0)
            QDesktopServices::openUrl(QUrl::fromLocalFile(table_->item(row, FolderColumn)->text()));
    });
    connect(use_, &QPushButton::clicked, this, [this] {
        if (const auto id = selectedId(); !id.isEmpty()) Q_EMIT useModel(id);
    });
    connect(cancel_, &QPushButton::clicked, tasks_, &ModelTasks::cancel);
    connect(table_, &QTableWidget::itemSelectionChanged, this, &ModelManagerDialog::updateButtons);
    connect(tasks_, &ModelTasks::progress, this, [this](const QString& phase, double fraction) {
        progress_->setValue(static_cast<int>(fraction * 1000));
        progress_->setFormat(phase + QStringLiteral(" %p%"));
    });
    connect(tasks_, &ModelTasks::finished, this, [this](const QString& text) {
        setBusy(false);
        message_->setText(text);
        const auto keep = selectedId();
        refresh();
        selectModel(keep);
        if (std::exchange(changesStore_, false)) Q_EMIT storeChanged();
    });
    connect(tasks_, &ModelTasks::failed, this, [this](const QString& text) {
        changesStore_ = false;
        setBusy(false);
        message_->setText(tr("Not done: %1").arg(text));
    });
    refresh();
}

QString ModelManagerDialog::selectedId() const {
    const auto row = table_->currentRow();
    return row >= 0 && table_->item(row, IdColumn) ? table_->item(row, IdColumn)->text() : QString();
}

bool ModelManagerDialog::selectModel(const QString& id) {
    for (int row = 0; row < table_->rowCount(); ++row)
        if (table_->item(row, IdColumn)->text() == id) {
            table_->selectRow(row);
            return true;
        }
    return false;
}

void ModelManagerDialog::importFolder(const QString& folder) {
    changesStore_ = tasks_->importFolder(folder);
    setBusy(changesStore_);
    message_->setText(tr("Importing %1…").arg(folder));
}

void ModelManagerDialog::verifySelected(bool full) {
    if (const auto id = selectedId(); !id.isEmpty()) {
        setBusy(tasks_->verify(id, full));
        message_->setText(tr("Verifying %1…").arg(id));
    }
}

void ModelManagerDialog::forgetSelected() {
    if (const auto id = selectedId(); !id.isEmpty() && id != inUse_) {
        changesStore_ = true;
        tasks_->forget(id);
    }
}

void ModelManagerDialog::quantizeSelected(const QString& type) {
    const auto id = selectedId();
    if (id.isEmpty() || !smaller_->isEnabled()) return;
    changesStore_ = tasks_->quantize(id, type);
    setBusy(changesStore_);
    const auto name = type == QStringLiteral("fp8") ? tr("FP8") : type == QStringLiteral("w8a8") ? tr("W8A8") : tr("int8");
    message_->setText(tr("Making a smaller copy of %1 (%2)…").arg(id, name));
}

void ModelManagerDialog::offerSmallerCopy() {
    if (smaller_->isEnabled())
        smaller_->showMenu();
    else if (tasks_->busy())
        message_->setText(tr("Wait for the running operation to end (or Cancel it) first."));
    else
        message_->setText(tr("Select a model for the smaller copy: adapters and models that are already 8-bit have none."));
}

void ModelManagerDialog::setModelInUse(const QString& id) {
    inUse_ = id;
    updateButtons();
}

void ModelManagerDialog::reject() {
    if (tasks_->busy()) {
        tasks_->cancel();
        message_->setText(tr("Cancelling…"));
        return;
    }
    QDialog::reject();
}

void ModelManagerDialog::refresh() {
    const auto models = storedModels();
    table_->setRowCount(0);
    for (const auto& model : models) {
        const int row = table_->rowCount();
        table_->insertRow(row);
        auto kind = model.adapter  ? tr("LoRA adapter for %1").arg(model.base.isEmpty() ? tr("any model") : model.base)
                    : model.server ? tr("Server: %1").arg(model.architecture)
                                   : (model.modelType.isEmpty() ? model.architecture : model.modelType);
        if (!model.quantization.isEmpty()) kind += QStringLiteral(", ") + model.quantization;
        const QStringList cells{model.id,
                                kind,
                                languagesSummary(model),
                                model.server ? QString() : sizeText(model.weightBytes),
                                model.revision.isEmpty() ? model.source : model.source + " @ " + model.revision.left(8),
                                model.adapter || model.server ? QString() : QString::number(model.adapters),
                                model.folder};
        for (int column = 0; column < ColumnCount; ++column) {
            auto* item = new QTableWidgetItem(cells.at(column));
            item->setToolTip(column == FolderColumn      ? model.folder
                             : column == LanguagesColumn ? languagesTooltip(model)
                                                         : model.architecture);
            item->setData(Qt::UserRole, model.forgettable);
            item->setData(Qt::UserRole + 1, model.adapter || model.server || !model.quantization.isEmpty());  // no smaller copy
            item->setData(Qt::UserRole + 2, model.server);
            item->setData(Qt::UserRole + 3, model.adapter);
            table_->setItem(row, column, item);
        }
    }
    if (models.isEmpty()) message_->setText(tr("No model is installed yet: Import folder… registers one."));
    updateButtons();
}

void ModelManagerDialog::updateButtons() {
    const auto row = table_->currentRow();
    const bool selected = row >= 0 && !tasks_->busy();
    const bool isAdapter = selected && table_->item(row, IdColumn)->data(Qt::UserRole + 3).toBool();
    const bool isServer = row >= 0 && table_->item(row, IdColumn)->data(Qt::UserRole + 2).toBool();
    verify_->setEnabled(selected);
    verify_->setToolTip(isServer ? tr("Connect to the server and ask for its model and languages")
                                 : tr("Check every file's size and time against the record made at import"));
    verifyFull_->setEnabled(selected && !isServer);
    openFolder_->setEnabled(row >= 0 && !isServer);
    use_->setEnabled(selected && !isAdapter);
    const bool inUse = selected && table_->item(row, IdColumn)->text() == inUse_;
    forget_->setEnabled(selected && !inUse && table_->item(row, IdColumn)->data(Qt::UserRole).toBool());
    forget_->setToolTip(inUse      ? tr("The window is using this model; load another first")
                        : isServer ? tr("Remove the server from the list; nothing on it changes")
                                   : tr("Forget an imported model; its folder is left as it is"));
    import_->setEnabled(!tasks_->busy());
    addServer_->setEnabled(!tasks_->busy());
    const bool quantizable = selected && !table_->item(row, IdColumn)->data(Qt::UserRole + 1).toBool();
    smaller_->setEnabled(quantizable);
    smaller_->setToolTip(selected && !quantizable ? tr("Adapters and copies that are already 8-bit have no smaller copy")
                                                  : tr("Write a copy whose weights take 8 bits instead of 16 or 32: about half the "
                                                       "bytes read per word, so it translates faster; listed here as a model of its own"));
}

void ModelManagerDialog::setBusy(bool busy) {
    progress_->setValue(0);
    progress_->setVisible(busy);
    cancel_->setVisible(busy);
    updateButtons();
}

}  // namespace dragoman
