#include "util/paths.h"

#include <dlfcn.h>
#include <pwd.h>
#include <unistd.h>
#include <cstdlib>

namespace dragoman::paths {
namespace {

std::filesystem::path envPath(const char* name) {
    const char* value = std::getenv(name);
    return (value && *value) ? std::filesystem::path(value) : std::filesystem::path();
}

std::filesystem::path homeDir() {
    if (auto home = envPath("HOME"); !home.empty()) return home;
    if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir) return pw->pw_dir;
    return std::filesystem::temp_directory_path();
}

}  // namespace

std::filesystem::path userDataDir() {
    auto base = envPath("XDG_DATA_HOME");
    if (base.empty()) base = homeDir() / ".local" / "share";
    return base / "dragoman";
}

std::filesystem::path modelCacheDir() {
    if (auto dir = envPath("DRAGOMAN_MODELS"); !dir.empty()) return dir;
    return userDataDir() / "models";
}

std::filesystem::path huggingFaceHubDir() {
    if (auto dir = envPath("HF_HUB_CACHE"); !dir.empty()) return dir;
    if (auto home = envPath("HF_HOME"); !home.empty()) return home / "hub";
    return homeDir() / ".cache" / "huggingface" / "hub";
}

}  // namespace dragoman::paths

namespace dragoman::paths {

std::filesystem::path installedDataDir() {
    // The programs live in <prefix>/lib/dragoman or <prefix>/lib/<triplet>/dragoman (bin/ holds their launchers),
    // so the prefix is the nearest folder above the program with share/dragoman in it.
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return "/usr/share/dragoman";
    const auto fallback = exe.parent_path().parent_path() / "share" / "dragoman";
    auto dir = exe.parent_path();
    for (int up = 0; up < 4 && dir.has_relative_path(); ++up, dir = dir.parent_path()) {
        if (std::filesystem::is_directory(dir / "share" / "dragoman", ec)) return dir / "share" / "dragoman";
    }
    return fallback;
}

}  // namespace dragoman::paths

namespace dragoman::paths {

std::vector<std::filesystem::path> ownLibraryCandidates(std::string_view file, std::string_view buildPath) {
    std::vector<std::filesystem::path> candidates;
    std::error_code ec;
    const auto programDir = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
    if (!ec) {
        candidates.push_back(programDir / file);
        candidates.push_back(programDir.parent_path() / "lib" / "dragoman" / file);
    }
    if (!buildPath.empty()) candidates.emplace_back(buildPath);
    return candidates;
}

std::vector<void*> openFirstLibrary(const std::vector<std::filesystem::path>& candidates, std::initializer_list<const char*> symbols,
                                    std::string& failure, LibraryOpener open) {
    std::string tried;
    for (const auto& candidate : candidates) {
        std::error_code ec;
        if (!std::filesystem::exists(candidate, ec)) continue;
        ::dlerror();  // what an earlier call left is not this candidate's reason
        void* handle = open ? open(candidate) : ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* why = ::dlerror();  // null where the opener failed without saying why
            tried += std::string(" ") + (why ? why : candidate.string() + ": cannot be opened");
            continue;
        }
        std::vector<void*> found;
        for (const char* symbol : symbols)
            if (void* address = ::dlsym(handle, symbol)) found.push_back(address);
        if (found.size() == symbols.size()) return found;
        tried += " " + candidate.string() + " lacks its entry points;";
    }
    failure = tried.empty() ? std::string(": not installed") : tried;
    return {};
}

std::vector<void*> openOwnLibrary(std::string_view file, std::string_view buildPath, std::initializer_list<const char*> symbols,
                                  std::string& failure) {
    return openFirstLibrary(ownLibraryCandidates(file, buildPath), symbols, failure);
}

}  // namespace dragoman::paths
