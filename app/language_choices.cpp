#include "language_choices.h"

#include "language_list.h"

#include <QLocale>
#include <QObject>

namespace dragoman {
namespace {

QStringList known(const QStringList& codes) {
    QStringList kept;
    for (const auto& language : languageList())
        if (codes.contains(language.code)) kept << language.code;
    return kept;
}

}  // namespace

LanguageChoices allLanguageChoices() {
    QStringList all;
    for (const auto& language : languageList())
        all << language.code;
    return {QStringList{kDetectLanguage} + all, all};
}

LanguageChoices languageChoicesFor(const ModelInfo& model) {
    auto choices = allLanguageChoices();
    choices.sources.removeOne(kDetectLanguage);
    const auto targets = known(model.targetLanguages);
    // A bilingual model's own codes, as they are, even outside the table (opus-mt-en-sv's "sv"); "mul" is a
    // multilingual side, not a language.
    const auto own = [](const QString& code) { return code.isEmpty() || code == QLatin1String("mul") ? QStringList() : QStringList{code}; };
    if (!targets.isEmpty())
        choices.targets = targets;
    else if (const auto to = own(model.fixedTo); !to.isEmpty())
        choices.targets = to;
    // A multilingual model (language tokens, or prompts naming the target) reads the languages it writes.
    if (const auto from = own(model.fixedFrom); !from.isEmpty())
        choices.sources = from;
    else if (!targets.isEmpty())
        choices.sources = targets;
    // Detecting is a choice only where there is more than one language to tell apart.
    if (choices.sources.size() > 1) choices.sources.prepend(kDetectLanguage);
    return choices;
}

QString languageName(const QString& code) {
    if (code == kDetectLanguage) return QObject::tr("Detect language");
    for (const auto& language : languageList())
        if (language.code == code) return language.name;
    const QLocale locale(code);
    return locale.language() == QLocale::C ? code : QLocale::languageToString(locale.language());
}

QString systemLanguage() {
    const auto name = QLocale::system().name();  // "fr_FR", "zh_TW", "C"
    if (name == QLatin1String("zh_TW") || name == QLatin1String("zh_HK") || name == QLatin1String("zh_MO"))
        return QStringLiteral("zh-Hant");
    const auto code = name.section('_', 0, 0);
    return known({code}).value(0);
}

std::pair<QString, QString> pairWithin(const LanguageChoices& choices, const QString& from, const QString& to) {
    if (choices.offers(from, to)) return {from, to};
    auto source = choices.sources.contains(from)                   ? from
                  : choices.sources.contains(QStringLiteral("en")) ? QStringLiteral("en")
                                                                   : choices.sources.value(0);
    for (const auto& candidate : {to, systemLanguage(), QStringLiteral("de"), QStringLiteral("en")})
        if (choices.offers(source, candidate)) return {source, candidate};
    for (const auto& candidate : choices.targets)
        if (choices.offers(source, candidate)) return {source, candidate};
    // A model whose only target is the chosen source: take its first source that differs.
    for (const auto& s : choices.sources)
        for (const auto& t : choices.targets)
            if (choices.offers(s, t)) return {s, t};
    return {from, to};
}

}  // namespace dragoman
