#pragma once
// Help > About: version, what the bundled model was trained on (attribution the corpora's licenses ask for),
// and where the numbers live.
#include <QString>

class QWidget;

namespace dragoman {

QString aboutText();
void showAboutDialog(QWidget* parent);

}  // namespace dragoman
