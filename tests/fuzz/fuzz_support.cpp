#include "fuzz_support.h"

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <system_error>

namespace dragoman::fuzz {
namespace {

struct ScratchFolder {
    std::filesystem::path path;
    ScratchFolder() {
        const char* tmp = std::getenv("TMPDIR");
        path = std::filesystem::path(tmp && *tmp ? tmp : "/tmp") / ("dragoman-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(path);
    }
    ~ScratchFolder() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
};

}  // namespace

const std::filesystem::path& scratch() {
    static ScratchFolder folder;
    return folder.path;
}

std::filesystem::path writeScratch(const std::string& name, std::string_view bytes) {
    const auto path = scratch() / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out) fail("the scratch file could be written", __FILE__, __LINE__);
    return path;
}

std::filesystem::path fixture(const std::string& relative) {
    return std::filesystem::path(DRAGOMAN_TEST_FIXTURES) / relative;
}

std::string readFile(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) fail(("readable: " + path.string()).c_str(), __FILE__, __LINE__);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void fail(const char* what, const char* file, int line) {
    std::fprintf(stderr, "fuzz check failed: %s (%s:%d)\n", what, file, line);
    std::fflush(stderr);
    std::abort();
}

}  // namespace dragoman::fuzz
