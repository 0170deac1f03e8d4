#include "document_panel.h"

#include "document_queue.h"
#include "translation_controller.h"

#include <QApplication>
#include <QDesktopServices>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QPainter>
#include <QPushButton>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QUrl>
#include <QVBoxLayout>

namespace dragoman {
namespace {

// The state column of a document being translated is a progress bar with its text on it.
class ProgressDelegate : public QStyledItemDelegate {
public:
    using QStyledItemDelegate::QStyledItemDelegate;
    void paint(QPainter* painter, const QStyleOptionViewItem& option, const QModelIndex& index) const override {
        if (index.data(DocumentQueue::StateRole).toInt() != static_cast<int>(DocumentQueue::State::Translating)) {
            QStyledItemDelegate::paint(painter, option, index);
            return;
        }
        QStyleOptionProgressBar bar;
        bar.rect = option.rect.adjusted(1, 1, -1, -1);
        bar.minimum = 0;
        bar.maximum = 100;
        bar.progress = index.data(DocumentQueue::ProgressRole).toInt();
        bar.text = index.data().toString();
        bar.textVisible = true;
        bar.state = option.state | QStyle::State_Horizontal;
        bar.palette = option.palette;
        QApplication::style()->drawControl(QStyle::CE_ProgressBar, &bar, painter);
    }
};

}  // namespace

DocumentPanel::DocumentPanel(TranslationController* controller, QWidget* parent) : QWidget(parent), controller_(controller) {
    auto* queue = controller_->documentQueue();
    table_ = new QTableView;
    table_->setModel(queue);
    table_->setAccessibleName(tr("Documents"));
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->setSelectionMode(QAbstractItemView::SingleSelection);
    table_->setItemDelegateForColumn(DocumentQueue::StateColumn, new ProgressDelegate(table_));
    table_->verticalHeader()->setVisible(false);
    table_->horizontalHeader()->setSectionResizeMode(DocumentQueue::DocumentColumn, QHeaderView::ResizeToContents);
    table_->horizontalHeader()->setSectionResizeMode(DocumentQueue::StateColumn, QHeaderView::Stretch);
    table_->horizontalHeader()->setSectionResizeMode(DocumentQueue::OutputColumn, QHeaderView::ResizeToContents);
    table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
    // Compact rows, at least four of them in view (they follow the font, 200 % included).
    const int row = table_->fontMetrics().height() + 8;
    table_->verticalHeader()->setDefaultSectionSize(row);
    table_->setMinimumHeight(table_->horizontalHeader()->sizeHint().height() + 4 * row + 2 * table_->frameWidth());

    // Accessible names are the visible labels (voice control says what it sees); descriptions say more.
    cancel_ = new QPushButton(tr("Ca&ncel"));
    cancel_->setAccessibleDescription(tr("Cancel the selected document"));
    cancelAll_ = new QPushButton(tr("Cancel a&ll"));
    cancelAll_->setAccessibleDescription(tr("Cancel every document not finished"));
    open_ = new QPushButton(tr("O&pen"));
    open_->setAccessibleDescription(tr("Open the translated copy"));
    showFolder_ = new QPushButton(tr("Show in fol&der"));
    showFolder_->setAccessibleDescription(tr("Open the folder of the translated copy"));
    clear_ = new QPushButton(tr("Clea&r finished"));
    clear_->setAccessibleDescription(tr("Remove finished documents from the list"));

    auto* buttons = new QHBoxLayout;
    for (auto* button : {cancel_, cancelAll_, open_, showFolder_, clear_})
        buttons->addWidget(button);
    buttons->addStretch(1);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(table_, 1);
    layout->addLayout(buttons);

    connect(cancel_, &QPushButton::clicked, this, [this] { controller_->cancelDocument(selectedRow()); });
    connect(cancelAll_, &QPushButton::clicked, controller_, &TranslationController::cancelAllDocuments);
    connect(open_, &QPushButton::clicked, this, [this, queue] {
        if (const int row = selectedRow(); row >= 0) QDesktopServices::openUrl(QUrl::fromLocalFile(queue->job(row).output));
    });
    connect(showFolder_, &QPushButton::clicked, this, [this, queue] {
        if (const int row = selectedRow(); row >= 0) {
            const auto& job = queue->job(row);
            QDesktopServices::openUrl(QUrl::fromLocalFile(QFileInfo(job.output.isEmpty() ? job.path : job.output).absolutePath()));
        }
    });
    connect(clear_, &QPushButton::clicked, queue, &DocumentQueue::clearFinished);
    connect(table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, &DocumentPanel::updateActions);
    for (const auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(queue, signal, this, [this] {
            setVisible(controller_->documentQueue()->size() > 0);
            updateActions();
        });
    connect(queue, &QAbstractItemModel::dataChanged, this, &DocumentPanel::updateActions);
    setVisible(false);
    updateActions();
}

int DocumentPanel::selectedRow() const {
    const auto rows = table_->selectionModel()->selectedRows();
    return rows.isEmpty() ? -1 : rows.first().row();
}

void DocumentPanel::updateActions() {
    const auto* queue = controller_->documentQueue();
    const int row = selectedRow();
    bool unfinished = false, finished = false;
    for (int r = 0; r < queue->size(); ++r)
        (queue->finished(r) ? finished : unfinished) = true;
    cancel_->setEnabled(row >= 0 && !queue->finished(row) && !queue->stopping(row));
    cancelAll_->setEnabled(unfinished);
    open_->setEnabled(row >= 0 && !queue->job(row).output.isEmpty());
    showFolder_->setEnabled(row >= 0);
    clear_->setEnabled(finished);
}

}  // namespace dragoman
