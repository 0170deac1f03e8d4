#include "util/regular_file.h"

#include "util/error.h"

#include <sys/stat.h>

namespace dragoman {

void requireRegularFile(const std::filesystem::path& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode)) return;  // stat() itself never waits on a pipe
    const char* kind = S_ISDIR(st.st_mode)                          ? "a folder"
                       : S_ISFIFO(st.st_mode)                       ? "a named pipe"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                                                                    : "not a regular file";
    throw Error("io", path.string() + " is " + kind + ", not a file to read");
}

}  // namespace dragoman
