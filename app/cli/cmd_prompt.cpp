#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_option.h"
#include "cli/prompt_options.h"

#include <iostream>
#include <iterator>

namespace dragoman::cli {

// prompt --model M --from L --to L [--text T] [prompt options]: the exact text the model receives for T (or
// stdin), one prompt after another, each followed by a line break.
int runPrompt(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli prompt"),
                    QStringLiteral("Print the exact text a model receives for a translation (chat format and special tokens spelled "
                                   "out), one prompt per line of text."));
    cmd.addOption(modelOption());
    cmd.addOption({QStringLiteral("from"), QStringLiteral("Source language code"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("to"), QStringLiteral("Target language code"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("text"), QStringLiteral("The text (default: all of stdin)"), QStringLiteral("T")});
    addPromptOptions(cmd);
    cmd.addOption({QStringLiteral("structured"),
                   QStringLiteral("The text is data of this format (JSON, YAML, ...): Hy-MT2's structured prompt"),
                   QStringLiteral("FORMAT")});
    if (!cmd.parse(args)) return kExitOk;
    if (!cmd.isSet("to")) throw UsageError("--to is required");
    checkLanguageOptions(cmd);
    const auto options = readPromptOptions(cmd);
    std::string text;
    if (cmd.isSet("text")) {
        text = cmd.value("text").toStdString();
    } else {
        requireTextOnStdin();
        text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
        if (!text.empty() && text.back() == '\n') text.pop_back();  // the file's last line break ends a line, not another one
    }
    // The model is loaded whole: the prompt's chat tokens come from its tokenizer, its profile from its identity.
    const auto model = loadModelOption(cmd);
    TranslationRequest request{text, cmd.value("from").toStdString(), cmd.value("to").toStdString(), 1, 1, {}};
    options.applyTo(request);
    request.structuredFormat = cmd.value("structured").trimmed().toStdString();
    for (const auto& prompt : model->prompts(request))
        print(prompt + "\n");
    return kExitOk;
}

}  // namespace dragoman::cli
