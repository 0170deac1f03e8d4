#include "runtime/torch_backend.h"

#include "kernels/threads.h"
#include "util/error.h"
#include "util/log.h"
#include "util/stopwatch.h"

#include <dlfcn.h>

#include <mutex>

namespace dragoman {
namespace {

using BackendEntry = const TorchBackend* (*)();
constexpr const char* kLibrary = "libdragoman_torch.so";
constexpr const char* kEntry = "dragoman_torch_backend";

// Beside this library (the engine's libraries live together), else by the loader's own search.
std::string libraryPath() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<const void*>(&libraryPath), &info) && info.dli_fname) {
        const auto beside = std::filesystem::path(info.dli_fname).parent_path() / kLibrary;
        std::error_code ec;
        if (std::filesystem::exists(beside, ec)) return beside.string();
    }
    return kLibrary;
}

}  // namespace

const TorchBackend& torchBackend() {
    static const TorchBackend* backend = nullptr;
    static std::string failure;
    static std::once_flag once;
    std::call_once(once, [] {
        const auto start = SteadyClock::now();
        // A program that links libtorch's side has it already; RTLD_NOLOAD finds it without opening another copy.
        void* library = ::dlopen(kLibrary, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
        const bool linked = library != nullptr;
        const auto path = libraryPath();
        // Global: ATen's, OpenBLAS's and libgomp's thread setters are looked up by name (kernels/threads.h).
        if (!library) library = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
        if (!library) {
            const char* why = ::dlerror();
            failure = "cannot load " + path +
                      " (libtorch's side of the engine: Marian models, CUDA, adapters, quantizing): " + (why ? why : "unknown error");
            return;
        }
        const auto entry = reinterpret_cast<BackendEntry>(::dlsym(library, kEntry));
        if (!entry) {
            failure = path + " lacks its entry point " + kEntry;
            return;
        }
        backend = entry();
        configureLoadedLibraries();
        if (!linked) log::logger().info("libtorch loaded in {:.3f} s ({})", secondsSince(start), path);
    });
    if (!backend) throw Error("config", failure);
    return *backend;
}

bool cudaDeviceAvailable() {
#ifdef DRAGOMAN_TORCH_HAS_CUDA
    return torchBackend().cudaAvailable();
#else
    return false;
#endif
}

}  // namespace dragoman
