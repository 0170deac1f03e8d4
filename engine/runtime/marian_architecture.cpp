// model_type "marian": OPUS-MT's MarianMTModel, its sentencepiece tokenizer and language-token translation.
#include "io/tensor_view.h"
#include "models/marian.h"
#include "runtime/architectures.h"
#include "runtime/language_token_strategy.h"

namespace dragoman {

extern const Architecture kMarianArchitecture;
const Architecture kMarianArchitecture{
    "marian",
    false,  // small models: the CPU kernels
    [](const BuildContext& c) -> Network {
        return std::make_shared<const MarianModel>(MarianConfig::parse(c.config, c.configLabel), tensorsOf(c.checkpoint, &c.copies),
                                                   c.modelId);
    },
    [](const std::filesystem::path& dir) { return std::filesystem::exists(dir / "source.spm"); },
    loadMarianTokenizer,
    [](const RunnableModel& model) -> std::unique_ptr<const TranslationStrategy> { return std::make_unique<LanguageTokenStrategy>(model); },
    languageTokenOffer,
};

}  // namespace dragoman
