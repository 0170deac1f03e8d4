#pragma once
// Files a command reads (configs, vocabularies, glossaries, key files, weights) must be plain files: opening a named
// pipe blocks until something writes to it, which a person who named the wrong path would see as a hang, and a
// folder or a device reads as nothing or as garbage.
#include <filesystem>

namespace dragoman {

// Throws Error("io") naming `path` and what it is when it exists and is not a regular file (symbolic links are
// followed); a missing path is left to the caller, which says "cannot open" or "not found" in its own words.
void requireRegularFile(const std::filesystem::path& path);

}  // namespace dragoman
