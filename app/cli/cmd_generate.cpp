#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_option.h"
#include "decode/causal_session.h"
#include "decode/search.h"
#include "io/safetensors_writer.h"
#include "runtime/runnable_model.h"
#include "util/error.h"

#include <torch/torch.h>

#include <cstring>

namespace dragoman::cli {
namespace {

std::vector<std::byte> floatBytes(const torch::Tensor& tensor) {
    const auto contiguous = tensor.to(torch::kFloat32).contiguous();
    std::vector<std::byte> bytes(contiguous.numel() * sizeof(float));
    std::memcpy(bytes.data(), contiguous.data_ptr(), bytes.size());
    return bytes;
}

// A decoder-only model continues its prompt: greedy, processors from generation_config.json unless raw,
// stopping after its EOS as generate() does.
int generateCausal(const RunnableModel& model, const std::vector<TokenId>& prompt, std::int64_t maxNew, std::int64_t beams, bool raw) {
    if (beams > 1) throw Error("unsupported", "beam search is not available for decoder-only models (" + model.id() + ")");
    const auto& c = *model.causal;
    const auto length = static_cast<std::int64_t>(prompt.size());
    if (length >= c.maxPositions()) throw Error("input", "the prompt fills the model's " + std::to_string(c.maxPositions()) + " positions");
    maxNew = std::min(maxNew, c.maxPositions() - length);
    const LogitsProcessors processors(model.generation, length + maxNew);
    SearchOptions options;
    options.maxNewTokens = maxNew;
    options.eosIds = model.generation.eosIds;
    options.processors = raw || processors.empty() ? nullptr : &processors;
    CausalSession session(c, prompt, maxNew);
    print(joinIds(greedySearch(session, prompt, options)) + "\n");
    return kExitOk;
}

}  // namespace

// logits --model M --ids S [--decoder-ids T] --out FILE: teacher-forced decoder logits [T, V] and the encoder output.
int runLogits(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli logits"), QStringLiteral("Write a model's logits for given ids to a .safetensors file."));
    cmd.addOption(modelOption());
    cmd.addOption({QStringLiteral("ids"), QStringLiteral("Source ids (or a causal model's input ids)"), QStringLiteral("IDS")});
    cmd.addOption({QStringLiteral("decoder-ids"), QStringLiteral("Decoder input ids of an encoder-decoder model"), QStringLiteral("IDS")});
    cmd.addOption({QStringLiteral("out"), QStringLiteral("Output .safetensors file"), QStringLiteral("FILE")});
    if (!cmd.parse(args)) return kExitOk;
    if (!cmd.isSet("ids") || !cmd.isSet("out")) throw UsageError("--ids and --out are required");
    const auto ids = parseIds(cmd.value("ids"), "ids");
    if (ids.empty()) throw UsageError("--ids is empty");
    const auto model = openModelOption(cmd);
    c10::InferenceMode guard;
    SafetensorsWriter writer;
    if (const auto& m = model->encoderDecoder) {
        auto decoderIds = cmd.isSet("decoder-ids") ? parseIds(cmd.value("decoder-ids"), "decoder-ids") : std::vector<TokenId>{m->decoderStartId()};
        if (decoderIds.empty()) throw UsageError("--decoder-ids is empty");
        for (auto id : decoderIds)
            if (id < 0 || id >= m->vocabSize()) throw Error("input", "decoder id " + std::to_string(id) + " is outside the vocabulary");
        const auto encoded = m->encode(ids);
        EncoderDecoderSession session(*m, encoded, 1, static_cast<std::int64_t>(decoderIds.size()));
        std::vector<torch::Tensor> rows;
        for (auto id : decoderIds) rows.push_back(session.next(torch::tensor({id}, torch::kInt64))[0]);
        const auto logits = torch::stack(rows);
        writer.addBytes("logits", DType::F32, logits.sizes().vec(), floatBytes(logits));
        writer.addBytes("encoder_last_hidden_state", DType::F32, encoded.sizes().vec(), floatBytes(encoded));
    } else if (const auto& c = model->causal) {
        if (cmd.isSet("decoder-ids")) throw UsageError("--decoder-ids is for encoder-decoder models; " + model->id() + " is decoder-only");
        auto state = c->start(static_cast<std::int64_t>(ids.size()));
        const auto logits = c->forward(*state, torch::tensor(ids, torch::kInt64), true);
        writer.addBytes("logits", DType::F32, logits.sizes().vec(), floatBytes(logits));
    }
    writer.write(cmd.value("out").toStdString());
    return kExitOk;
}

// generate --model M --ids 1,2,3 --max-new-tokens N [--beams K] [--raw]: the generated ids, up to and including EOS.
int runGenerate(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli generate"), QStringLiteral("Generate token ids (greedy, or beam search)."));
    cmd.addOption(modelOption());
    cmd.addOption({QStringLiteral("ids"), QStringLiteral("Source ids (or a causal model's prompt ids)"), QStringLiteral("IDS")});
    cmd.addOption({QStringLiteral("max-new-tokens"), QStringLiteral("Most tokens to generate"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("beams"), QStringLiteral("Beam search with K beams (default: greedy)"), QStringLiteral("K")});
    cmd.addOption({QStringLiteral("raw"), QStringLiteral("Apply none of generation_config.json's logits processors")});
    if (!cmd.parse(args)) return kExitOk;
    if (!cmd.isSet("ids")) throw UsageError("--ids is required");
    const auto ids = parseIds(cmd.value("ids"), "ids");
    if (ids.empty()) throw UsageError("--ids is empty");
    const auto maxNew = cmd.intValue("max-new-tokens", 64, 1, 100000);
    const auto beams = cmd.intValue("beams", 1, 1, 64);
    const auto model = openModelOption(cmd);
    c10::InferenceMode guard;
    if (model->causal) return generateCausal(*model, ids, maxNew, beams, cmd.isSet("raw"));
    const auto& m = model->encoderDecoder;
    const std::vector<TokenId> prefix{model->generation.decoderStartId.value_or(m->decoderStartId())};
    const LogitsProcessors processors(model->generation, static_cast<std::int64_t>(prefix.size()) + maxNew);
    SearchOptions options;
    options.maxNewTokens = maxNew;
    options.eosIds = model->generation.eosIds.empty() ? std::vector<TokenId>{m->eosId()} : model->generation.eosIds;
    options.processors = cmd.isSet("raw") ? nullptr : &processors;
    const auto encoded = m->encode(ids);
    EncoderDecoderSession session(*m, encoded, beams, static_cast<std::int64_t>(prefix.size()) + maxNew);
    const auto generated = beams == 1 ? greedySearch(session, prefix, options)
                                      : beamSearch(session, prefix, options,
                                                   {beams, model->generation.lengthPenalty, model->generation.earlyStopping});
    print(joinIds(generated) + "\n");
    return kExitOk;
}

}  // namespace dragoman::cli
