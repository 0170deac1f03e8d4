#pragma once
// Writing a small file so that a crash, a kill or a full disk leaves either the old file or the whole new one:
// the bytes go to a temporary file beside it, are fsynced, and only then take the name.
#include <filesystem>
#include <string_view>

namespace dragoman {

// Throws Error("io") saying why (the disk is full, no permission, ...) and removes the temporary file; the file
// at `path`, if any, is then as it was.
void writeFileAtomically(const std::filesystem::path& path, std::string_view bytes);

}  // namespace dragoman
