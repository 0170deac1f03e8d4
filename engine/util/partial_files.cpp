#include "util/partial_files.h"

#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <mutex>

namespace dragoman {
namespace {

// Fixed storage the handler reads without allocating: a path is copied in before its slot is marked taken.
constexpr int kSlots = 64;
constexpr std::size_t kPathBytes = 4096;
std::array<std::array<char, kPathBytes>, kSlots> registeredPaths{};
std::array<std::atomic<bool>, kSlots> taken{};

void onInterrupt(int signal) {
    for (int i = 0; i < kSlots; ++i)
        if (taken[static_cast<std::size_t>(i)].load(std::memory_order_acquire))
            ::unlink(registeredPaths[static_cast<std::size_t>(i)].data());
    ::signal(signal, SIG_DFL);  // then as the signal ends a process: the shell sees an interrupted command
    ::raise(signal);
}

}  // namespace

PartialFile::PartialFile(const std::filesystem::path& path) {
    const auto& text = path.native();
    if (text.size() >= kPathBytes) return;
    static std::mutex claiming;
    const std::lock_guard lock(claiming);
    for (int i = 0; i < kSlots; ++i) {
        auto& slot = taken[static_cast<std::size_t>(i)];
        if (slot.load(std::memory_order_relaxed)) continue;
        std::memcpy(registeredPaths[static_cast<std::size_t>(i)].data(), text.c_str(), text.size() + 1);
        slot.store(true, std::memory_order_release);
        slot_ = i;
        return;
    }
}

PartialFile::~PartialFile() {
    if (slot_ >= 0) taken[static_cast<std::size_t>(slot_)].store(false, std::memory_order_release);
}

void removePartialFilesWhenInterrupted() {
    static std::once_flag once;
    std::call_once(once, [] {
        struct sigaction action {};
        action.sa_handler = onInterrupt;
        sigemptyset(&action.sa_mask);
        for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
            struct sigaction previous {};
            // A signal the process was started to ignore (nohup) stays ignored.
            if (::sigaction(signal, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
            ::sigaction(signal, &action, nullptr);
        }
    });
}

}  // namespace dragoman
