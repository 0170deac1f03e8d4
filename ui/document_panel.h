#pragma once
// The window's list of documents (app/document_queue.h): each document with its state and progress, and what a
// person does with them: cancel one or all, open a translated copy, show its folder, clear the finished ones.
// Shown while the list has documents.
#include <QWidget>

class QPushButton;
class QTableView;

namespace dragoman {

class TranslationController;

class DocumentPanel : public QWidget {
    Q_OBJECT
public:
    explicit DocumentPanel(TranslationController* controller, QWidget* parent = nullptr);

    QTableView* table() const { return table_; }
    QPushButton* cancelButton() const { return cancel_; }
    QPushButton* cancelAllButton() const { return cancelAll_; }
    QPushButton* openButton() const { return open_; }
    QPushButton* showFolderButton() const { return showFolder_; }
    QPushButton* clearButton() const { return clear_; }

private:
    int selectedRow() const;
    void updateActions();

    TranslationController* controller_;
    QTableView* table_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QPushButton* cancelAll_ = nullptr;
    QPushButton* open_ = nullptr;
    QPushButton* showFolder_ = nullptr;
    QPushButton* clear_ = nullptr;
};

}  // namespace dragoman
