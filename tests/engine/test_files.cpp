#include "test_files.h"

#include "io/checkpoint.h"
#include "io/safetensors_writer.h"

#include <cstdlib>

namespace fs = std::filesystem;

namespace dragoman::test {

const std::vector<std::string>& sampleSentences() {
    static const std::vector<std::string> sentences{"The weather is nice today.",
                                                    "Where is the station?",
                                                    "I would like a cup of tea, please.",
                                                    "He reads a book.",
                                                    "Open the window.",
                                                    "The meeting starts at nine tomorrow morning.",
                                                    "Thank you very much!",
                                                    "This translator runs offline."};
    return sentences;
}

fs::path fixture(const char* name) {
    // $DRAGOMAN_TEST_FIXTURES runs the parity tests on other fixtures made by ../shared/fixtures/gen/make_all.py
    // (another seed, --profile-file sizes): what the outside checks do with held-out checkpoints.
    if (const char* root = std::getenv("DRAGOMAN_TEST_FIXTURES"); root && *root) return fs::path(root) / name;
    return fs::path(DRAGOMAN_TEST_FIXTURES) / name;
}

void copyFolder(const fs::path& from, const fs::path& to) {
    fs::create_directories(to);
    for (const auto& f : fs::directory_iterator(from))
        fs::copy_file(f.path(), to / f.path().filename(), fs::copy_options::overwrite_existing);
    for (const auto& f : fs::directory_iterator(to))
        fs::permissions(f.path(), fs::perms::owner_write, fs::perm_options::add);
}

StoredTensors readTensors(const fs::path& dir) {
    StoredTensors out;
    const auto checkpoint = Checkpoint::open(dir);
    for (const auto& [name, entry] : checkpoint.tensors()) {
        const auto bytes = entry.file->bytes(*entry.info);
        out[name] = {entry.info->dtype, entry.info->shape, {bytes.begin(), bytes.end()}};
    }
    return out;
}

void writeTensors(const StoredTensors& tensors, const fs::path& file) {
    SafetensorsWriter writer;
    for (const auto& [name, t] : tensors)
        writer.addBytes(name, t.dtype, t.shape, t.bytes);
    writer.write(file);
}

}  // namespace dragoman::test
