#include "cli/command_line.h"
#include "devcli/dev_commands.h"
#include "devcli/dev_model_option.h"
#include "io/safetensors.h"
#include "io/safetensors_writer.h"
#include "runtime/reference_calls.h"

#include <torch/torch.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>

namespace dragoman::cli {
namespace {

std::vector<std::byte> floatBytes(const torch::Tensor& tensor) {
    const auto contiguous = tensor.to(torch::kFloat32).contiguous();
    std::vector<std::byte> bytes(contiguous.numel() * sizeof(float));
    std::memcpy(bytes.data(), contiguous.data_ptr(), bytes.size());
    return bytes;
}

}  // namespace

// logits --model M --ids S [--decoder-ids T] --out FILE: teacher-forced decoder logits [T, V] and the encoder output.
int runLogits(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli logits"), QStringLiteral("Write a model's logits for given ids to a .safetensors file."));
    cmd.addOption(modelOption());
    cmd.addOption(adapterOption());
    cmd.addOption({QStringLiteral("ids"), QStringLiteral("Source ids (or a causal model's input ids)"), QStringLiteral("IDS")});
    cmd.addOption({QStringLiteral("decoder-ids"), QStringLiteral("Decoder input ids of an encoder-decoder model"), QStringLiteral("IDS")});
    cmd.addOption({QStringLiteral("out"), QStringLiteral("Output .safetensors file"), QStringLiteral("FILE")});
    if (!cmd.parse(args)) return kExitOk;
    if (!cmd.isSet("ids") || !cmd.isSet("out")) throw UsageError("--ids and --out are required");
    const auto ids = parseIds(cmd.value("ids"), "ids");
    if (ids.empty()) throw UsageError("--ids is empty");
    std::optional<std::vector<TokenId>> decoderIds;
    if (cmd.isSet("decoder-ids")) {
        decoderIds = parseIds(cmd.value("decoder-ids"), "decoder-ids");
        if (decoderIds->empty()) throw UsageError("--decoder-ids is empty");
    }
    // --out may replace an earlier logits file (a script writing each case to one path; its metadata says it is one)
    // or an empty file a script made, never another file: not a checkpoint's weights, not the model's own.
    const auto out = cmd.value("out").toStdString();
    std::error_code ec;
    if (std::filesystem::is_directory(out, ec)) throw Error("io", out + " is a folder; --out names the .safetensors file to write");
    if (std::filesystem::exists(out, ec)) {
        const bool empty = std::filesystem::is_regular_file(out, ec) && std::filesystem::file_size(out, ec) == 0;
        if (!empty && dragomanWriterOf(out) != "logits")
            throw Error("io", out + " exists and is not a logits file this command wrote: not overwritten");
    }
    const auto model = openModelOption(cmd);
    if (decoderIds && model->causal()) throw UsageError("--decoder-ids is for encoder-decoder models; " + model->id() + " is decoder-only");
    const auto forced = teacherForcedLogits(*model, ids, decoderIds, devAdapterFor(cmd, *model));
    SafetensorsWriter writer;
    writer.setMetadata("format", "pt");
    writer.setMetadata("dragoman", "logits");  // what a later --out may write over
    writer.addBytes("logits", DType::F32, forced.logits.sizes().vec(), floatBytes(forced.logits));
    if (forced.encoder.defined())
        writer.addBytes("encoder_last_hidden_state", DType::F32, forced.encoder.sizes().vec(), floatBytes(forced.encoder));
    writer.write(out);
    return kExitOk;
}

}  // namespace dragoman::cli
