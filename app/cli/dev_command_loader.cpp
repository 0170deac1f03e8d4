#include "cli/dev_command_loader.h"

#include "cli/command_line.h"
#include "dragoman.h"

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
        std::string tried;
        for (const auto& path : paths::ownLibraryCandidates("libdragoman_devcli.so")) {
            std::error_code ec;
            if (!std::filesystem::exists(path, ec)) continue;
            // Local: nothing else looks its symbols up; its dependencies (the engine's libraries) are the program's own.
            void* library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
            if (!library) {
                const char* why = ::dlerror();
                tried += std::string(" ") + (why ? why : path.c_str());
                continue;
            }
            entry = reinterpret_cast<Entry>(::dlsym(library, "dragoman_dev_command"));
            if (entry) break;
            tried += " " + path.string() + " lacks its entry point;";
        }
        if (!entry)
            failure =
                "cannot load the developer commands (libdragoman_devcli.so)" + (tried.empty() ? std::string(": not installed") : tried);
    }
    if (!entry) {
        std::cerr << "dragoman-cli: " << failure << "\n";
        return kExitFailure;
    }
    return entry(name, &args);
}

}  // namespace dragoman::cli
