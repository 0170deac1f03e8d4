#pragma once
// The language table as the Qt side sees it (ui never includes engine headers).
#include <QList>
#include <QString>

namespace dragoman {

struct LanguageEntry {
    QString code;
    QString name;  // English display name
};

QList<LanguageEntry> languageList();

}  // namespace dragoman
