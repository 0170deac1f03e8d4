#pragma once
// SHA-256 through OpenSSL, of memory or of a file (streamed, with progress that may cancel).
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

namespace dragoman {

// Lower-case hex digest.
std::string sha256Hex(std::span<const std::byte> data);

// `progress(bytesDone)` is called every few MiB; returning false cancels (throws Cancelled).
std::string sha256File(const std::filesystem::path& path, const std::function<bool(std::uint64_t bytesDone)>& progress = {});

}  // namespace dragoman
