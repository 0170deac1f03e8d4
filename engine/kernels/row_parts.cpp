#include "kernels/row_parts.h"

#include "kernels/thread_pool.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <mutex>
#include <string>

namespace dragoman::kernels {

std::int64_t lastLevelCacheBytes() {
    static const std::int64_t bytes = [] {
        // The highest level sysfs lists for CPU 0 ("32768K"), whose size is per cache, not per socket.
        std::int64_t found = 0;
        for (int index = 0; index < 8; ++index) {
            const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
            std::ifstream level(dir + "level"), size(dir + "size");
            int l = 0;
            std::string text;
            if (!(level >> l) || !(size >> text) || text.empty()) continue;
            std::int64_t value = 0;
            try {
                value = std::stoll(text);
            } catch (const std::exception&) {
                continue;
            }
            const char unit = text.back();
            value *= unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
            if (l >= 2) found = value;  // indexes ascend by level
        }
        if (found > 0) return found;
        const long reported = sysconf(_SC_LEVEL3_CACHE_SIZE);
        return static_cast<std::int64_t>(reported > 0 ? reported : 0);
    }();
    return bytes;
}

std::vector<std::int64_t> splitRows(const std::int64_t* rows, std::int64_t count, std::int64_t parts, std::int64_t least) {
    if (parts < 1 || count < parts) return {};
    std::int64_t total = 0;
    for (std::int64_t i = 0; i < count; ++i)
        total += rows[i];
    std::vector<std::int64_t> bounds{0};
    std::int64_t done = 0, i = 0;
    for (std::int64_t p = 1; p < parts; ++p) {
        // Part p - 1 ends where the rows so far come nearest to p / parts of all, leaving a sequence for each later part.
        const std::int64_t target = total * p / parts;
        std::int64_t start = done;
        do
            done += rows[i++];
        while (i < count - (parts - p) && std::abs(done + rows[i] - target) < std::abs(done - target));
        if (done - start < least) return {};
        bounds.push_back(i);
    }
    if (total - done < least) return {};
    bounds.push_back(count);
    return bounds;
}

namespace {
std::atomic<bool> partsEnabled{true};
}  // namespace

bool rowPartsEnabled() {
    return partsEnabled.load(std::memory_order_relaxed);
}

void setRowParts(bool enabled) {
    partsEnabled.store(enabled, std::memory_order_relaxed);
}

void runParts(std::int64_t parts, const std::function<void(std::int64_t)>& fn) {
    std::exception_ptr failure;
    std::mutex failureMutex;
    ThreadPool::shared().parallelFor(parts, 1, [&](std::int64_t begin, std::int64_t end) {
        for (auto part = begin; part < end; ++part) {
            try {
                fn(part);
            } catch (...) {
                std::lock_guard lock(failureMutex);
                if (!failure) failure = std::current_exception();
            }
        }
    });
    if (failure) std::rethrow_exception(failure);
}

}  // namespace dragoman::kernels
