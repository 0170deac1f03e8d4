#include "load/memory_guard.h"

#include "util/error.h"

#include <fmt/format.h>

#include <fstream>
#include <string>

namespace dragoman {

std::uint64_t availableMemoryBytes() {
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::uint64_t value = 0;
    std::string unit;
    while (in >> key >> value) {
        std::getline(in, unit);
        if (key == "MemAvailable:") return value * 1024;
    }
    return 0;
}

void checkFitsInMemory(const std::string& modelId, std::uint64_t weightBytes, std::uint64_t limitBytes) {
    const std::uint64_t available = limitBytes ? limitBytes : availableMemoryBytes();
    if (available == 0 || weightBytes <= available) return;
    throw Error("memory", fmt::format("model '{}' needs {:.2f} GiB for its weights but only {:.2f} GiB of memory is "
                                      "available; close other programs or choose a smaller model",
                                      modelId, weightBytes / 1073741824.0, available / 1073741824.0));
}

}  // namespace dragoman
