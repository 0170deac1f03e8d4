// model.safetensors.index.json beside two small shards: the index either agrees with the shards tensor for
// tensor or is refused with Error; file names in it never leave the folder. As in transformers, a shard the
// index never names is not opened, so a valid index yields one shard's tensors or both shards'.
#include "fuzz_support.h"
#include "io/checkpoint.h"
#include "io/safetensors_writer.h"
#include "util/error.h"

namespace {

const std::filesystem::path& checkpointFolder() {
    static const auto dir = [] {
        const auto d = dragoman::fuzz::scratch() / "checkpoint";
        std::filesystem::create_directories(d);
        for (const char* shard : {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}) {
            dragoman::SafetensorsWriter writer;
            const std::string prefix = shard[10] == '1' ? "a" : "b";
            for (const char* name : {".weight", ".bias"})
                writer.addBytes(prefix + name, dragoman::DType::F32, {2}, std::vector<std::byte>(8));
            writer.write(d / shard);
        }
        return d;
    }();
    return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    const auto& dir = checkpointFolder();
    fuzz::writeScratch("checkpoint/model.safetensors.index.json", fuzz::text(data, size));
    try {
        for (const auto& file : checkpointFiles(dir))
            FUZZ_CHECK(file.parent_path() == dir);
        const auto checkpoint = Checkpoint::open(dir);
        const auto tensors = checkpoint.tensors().size();
        FUZZ_CHECK(tensors == 2 || tensors == 4);
    } catch (const Error&) {
    }
    return 0;
}
