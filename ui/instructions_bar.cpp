#include "instructions_bar.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>

namespace dragoman {

InstructionsBar::InstructionsBar(QWidget* parent) : QWidget(parent) {
    style_ = new QComboBox;
    style_->setEditable(true);
    style_->setInsertPolicy(QComboBox::NoInsert);
    style_->setMinimumContentsLength(14);
    style_->setAccessibleName(tr("Translation style"));
    style_->setToolTip(tr("The style the translation must keep, in the model's words: choose one or type your own"));
    // The style goes into the prompt as written: the card's examples are English words.
    style_->addItems({QString(), QStringLiteral("formal"), QStringLiteral("casual"), QStringLiteral("polite"), QStringLiteral("legal"),
                      QStringLiteral("academic"), QStringLiteral("technical"), QStringLiteral("literary"), QStringLiteral("concise")});
    style_->lineEdit()->setPlaceholderText(tr("Default style"));
    preferences_ = new QLineEdit;
    preferences_->setAccessibleName(tr("Translation preferences"));
    preferences_->setPlaceholderText(tr("Preferences, separated by ; (e.g. keep product names in English; address the reader as Sie)"));
    preferences_->setClearButtonEnabled(true);

    auto* layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* label = new QLabel(tr("&Instructions:"));
    label->setBuddy(style_);
    layout->addWidget(label);
    layout->addWidget(style_);
    layout->addWidget(preferences_, 1);

    connect(style_, &QComboBox::currentTextChanged, this, [this] {
        // Typing a style reports when it is finished (Enter or leaving the field); choosing one reports at once.
        if (!style_->lineEdit()->hasFocus()) report();
    });
    connect(style_->lineEdit(), &QLineEdit::editingFinished, this, &InstructionsBar::report);
    connect(preferences_, &QLineEdit::editingFinished, this, &InstructionsBar::report);
}

void InstructionsBar::display(const QString& style, const QStringList& preferences) {
    displaying_ = true;
    style_->setCurrentText(style);
    preferences_->setText(preferences.join(QStringLiteral("; ")));
    displaying_ = false;
}

void InstructionsBar::report() {
    if (displaying_) return;
    QStringList preferences;
    for (const auto& p : preferences_->text().split(';'))
        if (!p.trimmed().isEmpty()) preferences << p.trimmed();
    Q_EMIT edited(style_->currentText().trimmed(), preferences);
}

}  // namespace dragoman
