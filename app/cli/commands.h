#pragma once
// Entry points of the dragoman-cli subcommands; each lives in its own cmd_*.cpp file.
#include <QStringList>

namespace dragoman::cli {

int runInspect(const QStringList& args);
int runTokenize(const QStringList& args);
int runDetokenize(const QStringList& args);
int runLogits(const QStringList& args);
int runGenerate(const QStringList& args);
int runTranslate(const QStringList& args);
int runTranslateFile(const QStringList& args);
int runModels(const QStringList& args);
int runBench(const QStringList& args);
int runMakeSynthetic(const QStringList& args);

}  // namespace dragoman::cli
