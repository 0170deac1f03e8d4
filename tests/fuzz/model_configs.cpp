// One JSON document read as each kind of configuration a model or adapter folder holds: config.json of both
// architectures, generation_config.json, adapter_config.json and a quantization_config. Each either reads it
// or throws Error naming the field; no other exception, no crash, no division by a zero it was given.
#include "adapters/lora_config.h"
#include "decode/generation_config.h"
#include "fuzz_support.h"
#include "models/hunyuan_config.h"
#include "models/marian_config.h"
#include "models/quantization_config.h"
#include "util/error.h"

#include <nlohmann/json.hpp>

#include <cmath>

namespace {

template <typename Read>
void expectCleanError(Read&& read) {
    try {
        read();
    } catch (const dragoman::Error&) {
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    const auto text = fuzz::text(data, size);
    // generation_config.json straight from the file: the reader handles invalid JSON itself.
    const auto dir = fuzz::scratch() / "configs";
    std::filesystem::create_directories(dir);
    fuzz::writeScratch("configs/generation_config.json", text);
    expectCleanError([&] {
        const auto generation = GenerationConfig::load(dir);
        FUZZ_CHECK(generation.numBeams >= 1 && generation.topK >= 0 && generation.noRepeatNgramSize >= 0);
        FUZZ_CHECK(generation.topP >= 0 && generation.topP <= 1 && std::isfinite(generation.temperature) && generation.temperature >= 0);
        FUZZ_CHECK(std::isfinite(generation.repetitionPenalty) && generation.repetitionPenalty > 0 &&
                   std::isfinite(generation.lengthPenalty));
        FUZZ_CHECK(generation.maxLength.value_or(1) >= 1 && generation.maxNewTokens.value_or(1) >= 1);
    });
    const auto json = nlohmann::json::parse(text, nullptr, false);
    if (json.is_discarded()) return 0;
    expectCleanError([&] {
        const auto marian = MarianConfig::parse(json, "config.json");
        FUZZ_CHECK(marian.dModel > 0 && marian.encoderHeads > 0 && marian.decoderHeads > 0 && marian.vocabSize > 0);
    });
    expectCleanError([&] {
        const auto hunyuan = HunyuanConfig::parse(json, "config.json");
        FUZZ_CHECK(hunyuan.heads > 0 && hunyuan.kvHeads > 0 && hunyuan.headDim > 2);
        FUZZ_CHECK(std::isfinite(hunyuan.ropeBase()) && hunyuan.ropeBase() > 0);
    });
    expectCleanError([&] {
        const auto lora = LoraConfig::parse(json, "adapter_config.json");
        for (const char* module : {"model.layers.0.self_attn.q_proj", "model.decoder.layers.1.fc1", "lm_head"})
            if (lora.targets(module)) FUZZ_CHECK(lora.rankOf(module) > 0);
    });
    expectCleanError([&] { checkQuantizationConfig(json, "config.json"); });
    return 0;
}
