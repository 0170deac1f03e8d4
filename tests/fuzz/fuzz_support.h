#pragma once
// What the fuzz targets share: a scratch folder for readers that take a path, the fixtures, and a check that
// stops the run (a finding) when a reader answers malformed input with anything but a clear error.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace dragoman::fuzz {

// The input as text (any bytes).
inline std::string_view text(const std::uint8_t* data, std::size_t size) {
    return {reinterpret_cast<const char*>(data), size};
}

// This process's own scratch folder (under TMPDIR), made on first use and removed at exit.
const std::filesystem::path& scratch();
// Writes `bytes` to scratch()/name and returns the path.
std::filesystem::path writeScratch(const std::string& name, std::string_view bytes);
// tests/fixtures/<relative>.
std::filesystem::path fixture(const std::string& relative);
std::string readFile(const std::filesystem::path& path);

// A finding: prints what was violated and aborts, so libFuzzer and the replay runner both report it.
[[noreturn]] void fail(const char* what, const char* file, int line);

}  // namespace dragoman::fuzz

#define FUZZ_CHECK(condition)                                                     \
    do {                                                                          \
        if (!(condition)) ::dragoman::fuzz::fail(#condition, __FILE__, __LINE__); \
    } while (false)
