#include "cli/prompt_options.h"
#include "dragoman.h"

#include <QFile>
#include <QStringDecoder>

namespace dragoman::cli {
namespace {

// source<TAB>target per line; blank lines and lines starting with '#' are skipped.
std::vector<std::pair<std::string, std::string>> readGlossary(const QString& path) {
    requireRegularFile(path.toStdString());
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw Error("io", "cannot read glossary " + path.toStdString() + ": " + file.errorString().toStdString());
    if (file.size() > 16 * 1024 * 1024) throw Error("input", "glossary " + path.toStdString() + " is larger than 16 MiB");
    std::vector<std::pair<std::string, std::string>> entries;
    int lineNumber = 0;
    while (!file.atEnd()) {
        QStringDecoder utf8(QStringConverter::Utf8);
        const QString line = QString(utf8(file.readLine())).trimmed();
        ++lineNumber;
        if (utf8.hasError())
            throw Error("input", "glossary " + path.toStdString() + " line " + std::to_string(lineNumber) + " is not valid UTF-8");
        if (line.isEmpty() || line.startsWith('#')) continue;
        const auto columns = line.split('\t');
        if (columns.size() != 2 || columns[0].trimmed().isEmpty() || columns[1].trimmed().isEmpty())
            throw Error("input", path.toStdString() + ":" + std::to_string(lineNumber) + ": expected source<TAB>target");
        entries.emplace_back(columns[0].trimmed().toStdString(), columns[1].trimmed().toStdString());
    }
    return entries;
}

}  // namespace

void addPromptOptions(CommandLine& cmd) {
    cmd.addOption({QStringLiteral("glossary"), QStringLiteral("Terminology TSV (source<TAB>target)"), QStringLiteral("FILE.tsv")});
    cmd.addOption(
        {QStringLiteral("context"), QStringLiteral("Background or preceding text, for contextual translation"), QStringLiteral("T")});
    cmd.addOption({QStringLiteral("style"), QStringLiteral("Translation style, e.g. formal, casual, legal (Hy-MT2)"), QStringLiteral("S")});
    cmd.addRepeatableOption(
        {QStringLiteral("preference"), QStringLiteral("A translation preference; repeat for several (Hy-MT2)"), QStringLiteral("P")});
    cmd.addOption({QStringLiteral("keep-delimiters"), QStringLiteral("Keep the source's delimiters, as many and where they are (Hy-MT2)")});
    cmd.addOption({QStringLiteral("prompt-profile"),
                   QStringLiteral("The prompt templates: hy-mt1.5 or hy-mt2 (default: what the model's name says)"), QStringLiteral("P")});
}

PromptOptions readPromptOptions(const CommandLine& cmd) {
    PromptOptions options;
    if (cmd.isSet("glossary")) options.glossary = readGlossary(cmd.value("glossary"));
    options.context = cmd.value("context").toStdString();
    if (cmd.isSet("style")) {
        options.style = cmd.value("style").trimmed().toStdString();
        if (options.style.empty()) throw UsageError("--style needs a style, e.g. --style formal");
    }
    for (const auto& preference : cmd.values("preference")) {
        if (preference.trimmed().isEmpty()) throw UsageError("--preference needs some text");
        options.preferences.push_back(preference.trimmed().toStdString());
    }
    options.keepDelimiters = cmd.isSet("keep-delimiters");
    if (cmd.isSet("prompt-profile")) {
        options.profile = cmd.value("prompt-profile").toStdString();
        try {
            checkPromptProfile(options.profile);
        } catch (const Error& e) {
            throw UsageError("--prompt-profile: " + e.detail());
        }
    }
    return options;
}

void PromptOptions::applyTo(TranslationRequest& request) const {
    request.glossary = glossary;
    request.context = context;
    request.style = style;
    request.preferences = preferences;
    request.keepDelimiters = keepDelimiters;
    request.promptProfile = profile;
}

}  // namespace dragoman::cli
