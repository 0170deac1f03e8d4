#pragma once
// Which languages the window offers for a model: a bilingual pair its two languages, a multilingual model the
// languages it has tokens or prompt names for (on both sides), a model that says nothing every known language;
// and which pair to show when the model changes or on a first run.
#include "engine_worker.h"

#include <QString>
#include <QStringList>

namespace dragoman {

// The source "Detect language": each text's language is detected when it is translated (sourceLanguageFor).
inline const QString kDetectLanguage = QStringLiteral("auto");

struct LanguageChoices {
    // Codes, in the language table's order; a model that reads several languages has kDetectLanguage first.
    QStringList sources, targets;
    bool offers(const QString& from, const QString& to) const { return from != to && sources.contains(from) && targets.contains(to); }
};

// Every known language on both sides: before a model is loaded.
LanguageChoices allLanguageChoices();
LanguageChoices languageChoicesFor(const ModelInfo& model);

// A code's English name: the language table's, else Qt's (a bilingual model's "sv"), else the code;
// kDetectLanguage's is "Detect language".
QString languageName(const QString& code);

// The system locale's language as a code of the language table ("fr" for fr_FR, "zh-Hant" for zh_TW), or empty.
QString systemLanguage();

// The pair to show: `from`/`to` where the choices offer them, else English into the system's language, German
// or English, else the first languages offered.
std::pair<QString, QString> pairWithin(const LanguageChoices& choices, const QString& from, const QString& to);

}  // namespace dragoman
