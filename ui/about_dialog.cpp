#include "about_dialog.h"

#include <QMessageBox>

namespace dragoman {

QString aboutText() {
    return QObject::tr(
               "<h3>Dragoman %1</h3>"
               "<p>An offline translator: nothing you type leaves this computer.</p>"
               "<p>The bundled default model (English ⇄ German, English ⇄ Chinese) was trained by the Dragoman "
               "project on sentence pairs from <a href=\"https://tatoeba.org\">Tatoeba</a>, licensed "
               "<a href=\"https://creativecommons.org/licenses/by/2.0/fr/\">CC-BY 2.0 FR</a>, and from "
               "<a href=\"https://tico-19.github.io\">TICO-19</a>, released under CC0, and on the translations "
               "that Debian's packages ship (LibreOffice, GNOME, KDE and other applications, Wesnoth, Freeciv, "
               "Widelands), under their own licenses (MPL-2.0, GPL, LGPL). See the NOTICE file for the list, "
               "details and third-party licenses.</p>"
               "<p>Runs Hugging Face checkpoints of Helsinki-NLP OPUS-MT and Tencent HY-MT1.5 from your own "
               "folders or the Hugging Face cache.</p>")
        .arg(QStringLiteral(DRAGOMAN_VERSION));
}

void showAboutDialog(QWidget* parent) {
    QMessageBox::about(parent, QObject::tr("About Dragoman"), aboutText());
}

}  // namespace dragoman
