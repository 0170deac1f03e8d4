#include "cli/dev_command_loader.h"

#include "cli/command_line.h"

#include <dlfcn.h>

#include <filesystem>
#include <iostream>
#include <string>

namespace dragoman::cli {

int runDeveloperCommand(const char* name, const QStringList& args) {
    using Entry = int (*)(const char*, const QStringList*);
    static Entry entry = nullptr;
    static std::string failure;
    if (!entry && failure.empty()) {
        std::error_code ec;
        const auto path = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "libdragoman_devcli.so";
        // Local: nothing else looks its symbols up; its dependencies (the engine's libraries) are the program's own.
        if (void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            entry = reinterpret_cast<Entry>(::dlsym(library, "dragoman_dev_command"));
            if (!entry) failure = path.string() + " lacks its entry point";
        } else {
            const char* why = ::dlerror();
            failure = std::string("cannot load the developer commands: ") + (why ? why : path.c_str());
        }
    }
    if (!entry) {
        std::cerr << "dragoman-cli: " << failure << "\n";
        return kExitFailure;
    }
    return entry(name, &args);
}

}  // namespace dragoman::cli
