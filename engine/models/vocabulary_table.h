#pragma once
#include <string>
#include <vector>

namespace dragoman {

// A [vocab, dim] table of a network as the checkpoint names it (an embedding table, a separate output layer)
// and the modules whose stored weight repeats it (tied copies some exports keep): what a quantized copy may
// write in 8 bits, dropping the repeats.
struct VocabularyTable {
    std::string module;  // its weight is module + ".weight"
    std::vector<std::string> aliases;
};

}  // namespace dragoman
