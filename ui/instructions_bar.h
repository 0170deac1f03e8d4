#pragma once
// The "Instructions" row: a translation style (a few common ones offered, any text accepted) and preferences
// separated by semicolons, for models whose prompts take them (Hy-MT2). The window shows it only for such a
// model; what it holds comes from and goes to the TranslationController, which remembers it per model.
#include <QStringList>
#include <QWidget>

class QComboBox;
class QLineEdit;

namespace dragoman {

class InstructionsBar : public QWidget {
    Q_OBJECT
public:
    explicit InstructionsBar(QWidget* parent = nullptr);

    QComboBox* stylePicker() const { return style_; }
    QLineEdit* preferencesField() const { return preferences_; }
    // Shows what the controller holds, without reporting it back.
    void display(const QString& style, const QStringList& preferences);

Q_SIGNALS:
    // A person changed the style or finished editing the preferences.
    void edited(const QString& style, const QStringList& preferences);

private:
    void report();

    QComboBox* style_ = nullptr;
    QLineEdit* preferences_ = nullptr;
    bool displaying_ = false;
};

}  // namespace dragoman
