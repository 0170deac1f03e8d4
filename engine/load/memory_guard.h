#pragma once
// Refuses, with a clear message, a model whose weights cannot fit in the memory that is available,
// instead of letting the kernel's OOM killer end the process mid-load.
#include <cstdint>
#include <string>

namespace dragoman {

// MemAvailable from /proc/meminfo, in bytes (0 if unknown).
std::uint64_t availableMemoryBytes();

// Throws Error("memory") when `weightBytes` exceeds `limitBytes` (0: availableMemoryBytes()).
void checkFitsInMemory(const std::string& modelId, std::uint64_t weightBytes, std::uint64_t limitBytes = 0);

}  // namespace dragoman
