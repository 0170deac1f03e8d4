// model_type "marian": OPUS-MT's MarianMTModel, its sentencepiece tokenizer and language-token translation. The
// network and its strategy run on libtorch (runtime/torch_backend.h); the folder's languages are read here.
#include "runtime/architectures.h"
#include "runtime/language_tokens.h"
#include "runtime/torch_backend.h"

namespace dragoman {

extern const Architecture kMarianArchitecture;
const Architecture kMarianArchitecture{
    "marian",
    false,  // small models: the CPU
    [](const BuildContext& c) { return torchBackend().buildMarian(c); },
    [](const std::filesystem::path& dir) { return std::filesystem::exists(dir / "source.spm"); },
    loadMarianTokenizer,
    [](const RunnableModel& model) { return torchBackend().marianStrategy(model); },
    languageTokenOffer,
};

}  // namespace dragoman
