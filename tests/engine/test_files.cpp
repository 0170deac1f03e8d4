#include "test_files.h"

namespace fs = std::filesystem;

namespace dragoman::test {

fs::path fixture(const char* name) {
    return fs::path(DRAGOMAN_TEST_FIXTURES) / name;
}

void copyFolder(const fs::path& from, const fs::path& to) {
    fs::create_directories(to);
    for (const auto& f : fs::directory_iterator(from))
        fs::copy_file(f.path(), to / f.path().filename(), fs::copy_options::overwrite_existing);
    for (const auto& f : fs::directory_iterator(to))
        fs::permissions(f.path(), fs::perms::owner_write, fs::perm_options::add);
}

}  // namespace dragoman::test
