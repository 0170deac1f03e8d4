#include "cli/model_option.h"

namespace dragoman::cli {

QCommandLineOption modelOption() {
    return {QStringLiteral("model"), QStringLiteral("Model folder (Hugging Face layout) or id (default: the bundled model)"),
            QStringLiteral("M")};
}

QCommandLineOption adapterOption() {
    return {QStringLiteral("adapter"), QStringLiteral("LoRA adapter folder (PEFT) applied on top of the model, unmerged"),
            QStringLiteral("A")};
}

std::shared_ptr<const LoraSet> adapterFor(const CommandLine& cmd, const Model& model) {
    return cmd.isSet("adapter") ? model.loadAdapter(cmd.value("adapter").toStdString()) : nullptr;
}

std::string modelArgument(const CommandLine& cmd) {
    if (cmd.isSet("model")) return cmd.value("model").toStdString();
    if (auto id = findDefaultModel()) return *id;
    throw Error("model_not_found", "no default model is installed; add one with 'dragoman-cli models import DIR' and pass --model");
}

std::shared_ptr<const Model> loadModelOption(const CommandLine& cmd) {
    initEngine();
    return Model::load(modelArgument(cmd));
}

void checkLanguageOptions(const CommandLine& cmd, bool autoSource) {
    for (const char* option : {"from", "to"})
        if (cmd.isSet(option) && !findLanguage(cmd.value(option).toStdString()) &&
            !(autoSource && option == std::string("from") && cmd.value(option) == "auto"))
            throw UsageError(std::string("--") + option + ": unknown language code '" + cmd.value(option).toStdString() + "'");
}

std::string sourceFor(const std::string& from, const std::string& text, const ModelDescription& model, bool strict) {
    if (from != "auto") return from;
    const auto guess = sourceLanguageFor(text, model);
    if (strict && guess.unreadable)
        throw Error("input", guess.reason + (guess.from.empty() ? std::string(" (--from L names the source by hand)")
                                                                : " (--from " + guess.from + " translates it anyway)"));
    return guess.from;
}

}  // namespace dragoman::cli
