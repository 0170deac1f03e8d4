// model_type "hunyuan_v1_dense": Tencent HY-MT1.5 (HunYuanDenseV1ForCausalLM), its tokenizer.json and the
// model card's chat prompts.
#include "models/hunyuan_cpu.h"
#include "runtime/architectures.h"
#include "runtime/chat_prompt_strategy.h"
#include "runtime/torch_backend.h"

namespace dragoman {

extern const Architecture kHunyuanDenseArchitecture;
const Architecture kHunyuanDenseArchitecture{
    "hunyuan_v1_dense",
    true,  // CUDA when available (runtime/device.h)
    [](const BuildContext& c) -> Network {
        // On the CPU the network runs on the kernels straight from the mapped checkpoint; elsewhere on libtorch.
        if (!c.placement.onCpuKernels()) return torchBackend().buildHunyuan(c);
        const auto config = HunyuanConfig::parse(c.config, c.configLabel);
        auto weights = bindHunyuanCheckpoint(config, c.checkpoint, c.modelId);
        c.copies.tensors += weights.memory.copiedTensors;
        c.copies.bytes += weights.memory.copiedBytes;
        return Network::of(std::make_shared<const HunyuanCpuModel>(config, std::move(weights)));
    },
    [](const std::filesystem::path& dir) { return std::filesystem::exists(dir / "tokenizer.json"); },
    loadTokenizerJson,
    [](const RunnableModel& model) -> std::unique_ptr<const TranslationStrategy> { return std::make_unique<ChatPromptStrategy>(model); },
    [](const std::filesystem::path& dir) {
        return std::filesystem::exists(dir / "tokenizer.json") ? LanguageOffer{ChatPromptStrategy::languages(), {}} : LanguageOffer{};
    },
};

}  // namespace dragoman
