// libdragoman_devcli.so's one entry point: dragoman-cli opens this library when logits or bench runs
// (app/cli/dev_command_loader.cpp), so its own start never loads libtorch, which these commands compute with.
#include "devcli/dev_commands.h"

#include <cstring>

extern "C" __attribute__((visibility("default"))) int dragoman_dev_command(const char* name, const QStringList* args) {
    using namespace dragoman::cli;
    struct Entry {
        const char* name;
        int (*run)(const QStringList&);
    };
    static constexpr Entry table[] = {
        {"inspect", runInspect},   {"tokenize", runTokenize}, {"detokenize", runDetokenize},       {"logits", runLogits},
        {"generate", runGenerate}, {"bench", runBench},       {"make-synthetic", runMakeSynthetic}};
    for (const auto& entry : table)
        if (std::strcmp(entry.name, name) == 0) return entry.run(*args);
    return -1;
}
