#include "cli/model_option.h"

#include "runtime/threads.h"
#include "text/languages.h"

namespace dragoman::cli {

QCommandLineOption modelOption() {
    return {QStringLiteral("model"), QStringLiteral("Model folder (Hugging Face layout) or id (default: the bundled model)"),
            QStringLiteral("M")};
}

ModelEntry resolveModel(const CommandLine& cmd, const ModelStore& store) {
    return cmd.isSet("model") ? store.resolve(cmd.value("model").toStdString()) : store.defaultModel();
}

std::shared_ptr<RunnableModel> openModelOption(const CommandLine& cmd) {
    configureThreads();
    const ModelStore store;
    const auto entry = resolveModel(cmd, store);
    return openModel(store, entry.id);
}

std::vector<std::int64_t> parseIds(const QString& text, const char* option) {
    std::vector<std::int64_t> ids;
    if (text.trimmed().isEmpty()) return ids;
    for (const auto& part : text.split(',')) {
        bool ok = false;
        const auto id = part.trimmed().toLongLong(&ok);
        if (!ok || id < 0)
            throw UsageError(std::string("--") + option + " expects comma-separated token ids, got '" + part.toStdString() + "'");
        ids.push_back(id);
    }
    return ids;
}

std::string joinIds(const std::vector<std::int64_t>& ids) {
    std::string out;
    for (std::size_t i = 0; i < ids.size(); ++i)
        out += (i ? "," : "") + std::to_string(ids[i]);
    return out;
}

void checkLanguageOptions(const CommandLine& cmd) {
    for (const char* option : {"from", "to"})
        if (cmd.isSet(option) && !findLanguage(cmd.value(option).toStdString()))
            throw UsageError(std::string("--") + option + ": unknown language code '" + cmd.value(option).toStdString() + "'");
}

}  // namespace dragoman::cli
