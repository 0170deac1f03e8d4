// model_type "marian": OPUS-MT's MarianMTModel, its sentencepiece tokenizer and language-token translation. The
// network runs on the CPU kernels straight from the mapped checkpoint (models/marian_cpu.h), without libtorch; with
// Placement::libtorchOps it is libtorch's MarianModel (runtime/torch_backend.h).
#include "models/marian_cpu.h"
#include "runtime/architectures.h"
#include "runtime/language_token_strategy.h"
#include "runtime/language_tokens.h"
#include "runtime/torch_backend.h"

namespace dragoman {

extern const Architecture kMarianArchitecture;
const Architecture kMarianArchitecture{
    "marian",
    false,  // small models: the CPU
    [](const BuildContext& c) -> Network {
        if (c.placement.libtorchOps) return torchBackend().buildMarian(c);
        const auto config = MarianConfig::parse(c.config, c.configLabel);
        auto weights = bindMarianCheckpoint(config, c.checkpoint, c.modelId);
        c.copies.tensors += weights.memory.copiedTensors;
        c.copies.bytes += weights.memory.copiedBytes;
        return Network::of(std::make_shared<const MarianCpuModel>(config, std::move(weights)));
    },
    [](const std::filesystem::path& dir) { return std::filesystem::exists(dir / "source.spm"); },
    loadMarianTokenizer,
    [](const RunnableModel& model) -> std::unique_ptr<const TranslationStrategy> { return std::make_unique<LanguageTokenStrategy>(model); },
    languageTokenOffer,
};

}  // namespace dragoman
