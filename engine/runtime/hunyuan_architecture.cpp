// model_type "hunyuan_v1_dense": Tencent HY-MT1.5 (HunYuanDenseV1ForCausalLM), its tokenizer.json and the
// model card's chat prompts.
#include "io/tensor_view.h"
#include "models/hunyuan.h"
#include "runtime/architectures.h"
#include "runtime/chat_prompt_strategy.h"

namespace dragoman {

extern const Architecture kHunyuanDenseArchitecture;
const Architecture kHunyuanDenseArchitecture{
    "hunyuan_v1_dense",
    true,  // CUDA when available (runtime/device.h)
    [](const BuildContext& c) -> Network {
        const auto config = HunyuanConfig::parse(c.config, c.configLabel);
        // On the CPU the network runs on the kernels straight from the mapped checkpoint; elsewhere on libtorch.
        if (c.placement.onCpuKernels()) {
            auto weights = bindHunyuanCheckpoint(config, c.checkpoint, c.modelId);
            c.copies.tensors += weights.copiedTensors;
            c.copies.bytes += weights.copiedBytes;
            return std::make_shared<const HunyuanCpuModel>(config, std::move(weights));
        }
        return std::make_shared<const HunyuanModel>(config, tensorsOf(c.checkpoint, &c.copies), c.modelId, c.placement);
    },
    [](const std::filesystem::path& dir) { return std::filesystem::exists(dir / "tokenizer.json"); },
    loadTokenizerJson,
    [](const RunnableModel& model) -> std::unique_ptr<const TranslationStrategy> { return std::make_unique<ChatPromptStrategy>(model); },
    [](const std::filesystem::path& dir) {
        return std::filesystem::exists(dir / "tokenizer.json") ? LanguageOffer{ChatPromptStrategy::languages(), {}} : LanguageOffer{};
    },
};

}  // namespace dragoman
