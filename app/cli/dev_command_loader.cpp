#include "cli/dev_command_loader.h"

#include "cli/command_line.h"
#include "dragoman.h"

#include <iostream>
#include <string>

namespace dragoman::cli {

int runDeveloperCommand(const char* name, const QStringList& args) {
    using Entry = int (*)(const char*, const QStringList*);
    static Entry entry = nullptr;
    static std::string failure;
    if (!entry && failure.empty()) {
        std::string why;
        // Local: nothing else looks its symbols up; its dependencies (the engine's libraries) are the program's own.
        const auto symbols = paths::openOwnLibrary("libdragoman_devcli.so", {}, {"dragoman_dev_command"}, why);
        if (symbols.empty())
            failure = "cannot load the developer commands (libdragoman_devcli.so)" + why;
        else
            entry = reinterpret_cast<Entry>(symbols[0]);
    }
    if (!entry) {
        std::cerr << "dragoman-cli: " << failure << "\n";
        return kExitFailure;
    }
    return entry(name, &args);
}

}  // namespace dragoman::cli
