// The `dragoman` and `dragoman-cli` commands: set the C library's allocator tunables and OpenBLAS's starting thread
// count, then become the program
// (installed beside libdragoman_spm.so in lib/dragoman). The environment is the only way to reach glibc's
// tunables, and they are read once, before any constructor runs, so the program cannot set them for itself.
//
// Why: Debian's libtorch loads 286 shared libraries whose static constructors (libtorch's operator registration
// above all) allocate tens of megabytes in small blocks before main. With the heap in 4 KiB pages every new page
// is a fault, and on virtual machines with shadow page tables a fault costs tens of microseconds: ~17,000 faults,
// a fifth of a one-sentence translation. glibc.malloc.hugetlb=1 asks for transparent huge pages on the heap
// (madvise), which leaves ~7,000 (tests/bench/first_token.py and the README's "Start-up" measure it).
//
// OpenBLAS is read the same way: its library constructor starts a worker per core, which polls with sched_yield
// for about 0.1 s before it sleeps, all through the other libraries' constructors. The engine gives OpenBLAS one
// thread outside ParallelBlas scopes (kernels/threads.h), and openblas_set_num_threads starts the workers when a
// scope asks for them, so starting with one costs nothing later and saves that polling: a one-sentence translation
// on the bundled model took 0.28-0.32 s of user and 0.06-0.10 s of system time instead of 0.32-0.36 and 0.14-0.23.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>

extern char** environ;

namespace {

// A user's own GLIBC_TUNABLES are kept, after ours; ours is added only where they do not already choose a value
// for it. (glibc applies every tunable of the list but leaves only the first in the environment a process shows
// in /proc/PID/environ.)
void addAllocatorTunables() {
    constexpr std::string_view kTunable = "glibc.malloc.hugetlb";
    const char* current = std::getenv("GLIBC_TUNABLES");
    const std::string theirs = current ? current : "";
    if (theirs.find(kTunable) != std::string::npos) return;
    const std::string value = std::string(kTunable) + "=1" + (theirs.empty() ? "" : ":" + theirs);
    setenv("GLIBC_TUNABLES", value.c_str(), 1);
}

// OpenBLAS's thread count at start (see above), unless the caller chose one.
void startBlasWithOneThread() {
    setenv("OPENBLAS_NUM_THREADS", "1", 0);
}

}  // namespace

int main(int, char** argv) {
    std::error_code ec;
    const auto here = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
    if (ec) {
        std::fprintf(stderr, "dragoman: cannot find where this launcher is installed: %s\n", ec.message().c_str());
        return 127;
    }
    addAllocatorTunables();
    startBlasWithOneThread();
    // The build tree keeps programs in lib/dragoman; an installation in its library directory (lib on most
    // prefixes, lib/<triplet> on Debian's /usr).
    std::string tried;
    for (const char* relative : {DRAGOMAN_PROGRAM_IN_BUILD, DRAGOMAN_PROGRAM_INSTALLED}) {
        const auto program = (here / relative).lexically_normal();
        execve(program.c_str(), argv, environ);
        tried += "\n  " + program.string() + ": " + std::strerror(errno);
    }
    std::fprintf(stderr, "dragoman: cannot start the program:%s\n", tried.c_str());
    return 127;
}
