#pragma once
// Entry points of the dragoman-cli subcommands; each lives in its own cmd_*.cpp file.
#include <QStringList>

namespace dragoman::cli {

// The user's commands; the developer commands are in tools/devcli/dev_commands.h.
int runTranslate(const QStringList& args);
int runTranslateFile(const QStringList& args);
int runModels(const QStringList& args);
int runServe(const QStringList& args);
int runPrompt(const QStringList& args);
int runQuantize(const QStringList& args);

}  // namespace dragoman::cli
