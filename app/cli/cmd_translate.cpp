#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_option.h"
#include "runtime/translator.h"
#include "text/languages.h"
#include "util/error.h"

#include <iostream>

namespace dragoman::cli {
namespace {

void checkLanguage(const QString& code, const char* option) {
    if (!findLanguage(code.toStdString()))
        throw UsageError(std::string("--") + option + ": unknown language code '" + code.toStdString() + "'");
}

}  // namespace

// translate [--model M] --from L --to L [--text T] [--stream] [--beams K]: T, or each line of stdin.
int runTranslate(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli translate"), QStringLiteral("Translate text, or each line of stdin."));
    cmd.addOption(modelOption());
    cmd.addOption({QStringLiteral("from"), QStringLiteral("Source language code"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("to"), QStringLiteral("Target language code"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("text"), QStringLiteral("Text to translate (default: each line of stdin)"), QStringLiteral("T")});
    cmd.addOption({QStringLiteral("stream"), QStringLiteral("Print the text as tokens arrive")});
    cmd.addOption({QStringLiteral("beams"), QStringLiteral("Beam search with K beams (default: greedy)"), QStringLiteral("K")});
    cmd.addOption({QStringLiteral("sample"), QStringLiteral("Sample with the model's recommended settings")});
    cmd.addOption({QStringLiteral("seed"), QStringLiteral("Seed for --sample"), QStringLiteral("S")});
    cmd.addOption({QStringLiteral("glossary"), QStringLiteral("Terminology TSV (source<TAB>target)"), QStringLiteral("FILE.tsv")});
    cmd.addOption({QStringLiteral("context"), QStringLiteral("Preceding text, for contextual translation"), QStringLiteral("T")});
    if (!cmd.parse(args)) return kExitOk;
    if (!cmd.isSet("to")) throw UsageError("--to is required");
    checkLanguage(cmd.value("to"), "to");
    if (cmd.isSet("from")) checkLanguage(cmd.value("from"), "from");
    const auto beams = cmd.intValue("beams", 1, 1, 16);
    const auto model = openModelOption(cmd);
    for (const char* option : {"sample", "glossary", "context"})
        if (cmd.isSet(option))
            throw Error("unsupported", std::string("--") + option + " needs a model with prompts (HY-MT); " + model->id() + " is " +
                                           model->architecture);
    const Translator translator(model);
    const bool stream = cmd.isSet("stream");

    std::uint64_t requestId = 0;
    auto translateOne = [&](const std::string& text) {
        TranslationRequest request{text, cmd.value("from").toStdString(), cmd.value("to").toStdString(), beams, ++requestId, {}};
        if (stream) request.onDelta = [](std::string_view delta) {
            print(std::string(delta));
            return true;
        };
        const auto output = translator.translate(request);
        print(stream ? std::string("\n") : output + "\n");
    };
    if (cmd.isSet("text")) {
        translateOne(cmd.value("text").toStdString());
        return kExitOk;
    }
    for (std::string line; std::getline(std::cin, line);) translateOne(line);
    return kExitOk;
}

}  // namespace dragoman::cli
