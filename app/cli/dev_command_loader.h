#pragma once
// The developer commands that compute with libtorch (logits, bench: tools/devcli) live in libdragoman_devcli.so
// beside the program, opened when one of them runs: the other commands load libtorch only when a model needs it.
#include <QStringList>

namespace dragoman::cli {

// Runs developer command `name` (logits or bench); an error, exit code 1, where the library cannot be opened.
int runDeveloperCommand(const char* name, const QStringList& args);

}  // namespace dragoman::cli
