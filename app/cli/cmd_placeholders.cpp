#include "cli/command_line.h"
#include "cli/commands.h"
#include "util/error.h"

namespace dragoman::cli {

int runModels(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli models"), QStringLiteral("List, import and verify models."));
    cmd.addPositional(QStringLiteral("action"), QStringLiteral("list | import | verify"));
    if (!cmd.parse(args, 1, 3)) return kExitOk;
    throw Error("unavailable", "'models' is not available in this build yet");
}

int runBench(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli bench"), QStringLiteral("Benchmarks."));
    cmd.addPositional(QStringLiteral("kind"), QStringLiteral("load | generate"));
    if (!cmd.parse(args, 1, 1)) return kExitOk;
    throw Error("unavailable", "'bench' is not available in this build yet");
}

int runMakeSynthetic(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli make-synthetic"), QStringLiteral("Random-weight checkpoint."));
    if (!cmd.parse(args)) return kExitOk;
    throw Error("unavailable", "'make-synthetic' is not available in this build yet");
}

}  // namespace dragoman::cli
