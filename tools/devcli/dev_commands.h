#pragma once
// The developer commands of dragoman-cli (inspect, tokenize, detokenize, logits, generate, bench,
// make-synthetic): parity and speed checks that reach into the engine's internals. They live outside app/,
// so the window links none of this; dragoman-cli lists them with its own commands (app/cli/commands.cpp) and opens
// the library with logits and bench when one of those runs (app/cli/dev_command_loader.h).
#include <QStringList>

namespace dragoman::cli {

int runInspect(const QStringList& args);
int runTokenize(const QStringList& args);
int runDetokenize(const QStringList& args);
int runLogits(const QStringList& args);
int runGenerate(const QStringList& args);
int runBench(const QStringList& args);
int runMakeSynthetic(const QStringList& args);

}  // namespace dragoman::cli
