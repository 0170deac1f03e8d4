#pragma once
// Baselines measured beside our own load in `bench load`, each in a forked child so its memory does not
// count against ours: raw sequential reading of the files (what `cat FILE > /dev/null` does), and an eager
// load that reads each file into memory and copies every tensor out, as safetensors.load_file does.
#include <filesystem>
#include <vector>

namespace dragoman::bench {

struct BaselineResult {
    double seconds = -1;  // < 0: failed
    std::uint64_t bytes = 0;
    std::uint64_t peakRssBytes = 0;
};

BaselineResult rawRead(const std::vector<std::filesystem::path>& files);
BaselineResult eagerCopyLoad(const std::vector<std::filesystem::path>& files);

// Peak resident set size of this process, in bytes.
std::uint64_t peakRssBytes();

}  // namespace dragoman::bench
