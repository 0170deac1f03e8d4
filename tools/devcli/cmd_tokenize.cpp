#include "cli/command_line.h"
#include "devcli/dev_commands.h"
#include "devcli/dev_model_option.h"
#include "dragoman.h"
#include "runtime/architectures.h"

#include <iostream>

namespace dragoman::cli {

// tokenize --model M [--text T]: the source-side ids, one sequence per line (each stdin line without --text).
int runTokenize(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli tokenize"), QStringLiteral("Source-side token ids of a text."));
    cmd.addOption(modelOption());
    cmd.addOption({QStringLiteral("text"), QStringLiteral("Text to tokenize (default: each line of stdin)"), QStringLiteral("T")});
    if (!cmd.parse(args)) return kExitOk;
    const ModelStore store;
    const auto entry = resolveModel(cmd, store);
    const auto tokenizer = loadTokenizer(entry.dir, entry.modelType);
    if (cmd.isSet("text")) {
        print(joinIds(tokenizer->encode(cmd.value("text").toStdString())) + "\n");
        return kExitOk;
    }
    requireTextOnStdin();
    std::uint64_t number = 0;
    for (std::string line; std::getline(std::cin, line);) {
        // As --text is: bytes that are not UTF-8 are refused, never tokenized as something else.
        if (++number; !isValidUtf8(line)) throw Error("input", "line " + std::to_string(number) + " is not valid UTF-8");
        if (!print(joinIds(tokenizer->encode(line)) + "\n")) break;
    }
    return kExitOk;
}

// detokenize --model M --ids 1,2,3 [--keep-special]: the text exactly, then one newline.
int runDetokenize(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli detokenize"), QStringLiteral("Text of a list of token ids."));
    cmd.addOption(modelOption());
    cmd.addOption({QStringLiteral("ids"), QStringLiteral("Comma-separated token ids"), QStringLiteral("IDS")});
    cmd.addOption({QStringLiteral("keep-special"), QStringLiteral("Keep special tokens in the text")});
    if (!cmd.parse(args)) return kExitOk;
    if (!cmd.isSet("ids")) throw UsageError("--ids is required");
    const auto ids = parseIds(cmd.value("ids"), "ids");
    const ModelStore store;
    const auto entry = resolveModel(cmd, store);
    const auto tokenizer = loadTokenizer(entry.dir, entry.modelType);
    print(tokenizer->decode(ids, !cmd.isSet("keep-special")) + "\n");
    return kExitOk;
}

}  // namespace dragoman::cli
