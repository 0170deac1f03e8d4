#include "main_window.h"

#include "language_list.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QStatusBar>
#include <QToolButton>
#include <QVBoxLayout>

namespace dragoman {
namespace {

QComboBox* makeLanguagePicker(const QString& accessibleName, const QString& initialCode) {
    auto* box = new QComboBox;
    box->setAccessibleName(accessibleName);
    for (const auto& language : languageList()) box->addItem(language.name, language.code);
    box->setCurrentIndex(std::max(0, box->findData(initialCode)));
    return box;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
    setWindowTitle(QStringLiteral("Dragoman"));
    setWindowIcon(QIcon(QStringLiteral(":/dragoman/icons/dragoman.svg")));
    buildUi();
    showNoModel();
    resize(1000, 640);
}

void MainWindow::buildUi() {
    from_ = makeLanguagePicker(tr("Source language"), QStringLiteral("en"));
    to_ = makeLanguagePicker(tr("Target language"), QStringLiteral("de"));
    swap_ = new QToolButton;
    swap_->setText(QStringLiteral("⇄"));
    swap_->setToolTip(tr("Swap languages"));
    swap_->setAccessibleName(tr("Swap languages"));
    connect(swap_, &QToolButton::clicked, this, &MainWindow::swapLanguages);
    translate_ = new QPushButton(tr("Translate"));
    translate_->setAccessibleName(tr("Translate"));

    auto* pickers = new QHBoxLayout;
    pickers->addWidget(new QLabel(tr("From:")));
    pickers->addWidget(from_, 1);
    pickers->addWidget(swap_);
    pickers->addWidget(new QLabel(tr("To:")));
    pickers->addWidget(to_, 1);
    pickers->addStretch(1);
    pickers->addWidget(translate_);

    source_ = new QPlainTextEdit;
    source_->setAccessibleName(tr("Source text"));
    source_->setPlaceholderText(tr("Type or paste text to translate"));
    output_ = new QPlainTextEdit;
    output_->setReadOnly(true);
    output_->setAccessibleName(tr("Translation"));
    output_->setPlaceholderText(tr("The translation appears here"));
    auto* panes = new QSplitter(Qt::Horizontal);
    panes->addWidget(source_);
    panes->addWidget(output_);

    auto* central = new QWidget;
    auto* layout = new QVBoxLayout(central);
    layout->addLayout(pickers);
    layout->addWidget(panes, 1);
    setCentralWidget(central);

    modelStatus_ = new QLabel;
    modelStatus_->setAccessibleName(tr("Model status"));
    modelStatus_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    statusBar()->addWidget(modelStatus_, 1);
}

void MainWindow::showNoModel() {
    translate_->setEnabled(false);
    modelStatus_->setText(tr("No model is installed. Add one with: dragoman-cli models import /path/to/model-folder"));
}

void MainWindow::swapLanguages() {
    const int from = from_->currentIndex();
    from_->setCurrentIndex(to_->currentIndex());
    to_->setCurrentIndex(from);
}

}  // namespace dragoman
