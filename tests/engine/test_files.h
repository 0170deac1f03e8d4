#pragma once
// File helpers shared by the engine tests.
#include <filesystem>

namespace dragoman::test {

std::filesystem::path fixture(const char* name);
// Copies a fixture folder's files and makes them writable (the shared fixtures are read-only).
void copyFolder(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace dragoman::test
