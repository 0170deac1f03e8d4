#include "language_list.h"

#include "dragoman.h"

namespace dragoman {

QList<LanguageEntry> languageList() {
    QList<LanguageEntry> list;
    for (const auto& language : allLanguages())
        list.append({QString::fromStdString(language.code), QString::fromStdString(language.english)});
    return list;
}

}  // namespace dragoman
