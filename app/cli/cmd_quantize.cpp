// dragoman-cli quantize: a smaller, faster copy of a model with int8 or FP8 weights (dragoman.h quantizeModel).
#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_option.h"
#include "cli/quantize_copy.h"
#include "dragoman.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

namespace dragoman::cli {

QuantizeResult quantizeWithProgress(const QuantizeRequest& request) {
    // Progress for a person at a terminal; scripts reading stdout get only the summary.
    ProgressCallback progress;
    if (::isatty(STDERR_FILENO) == 1)
        progress = [](const ProgressReport& r) {
            std::fprintf(stderr, "\r%-24.*s %3d%%", static_cast<int>(r.phase.size()), r.phase.data(), static_cast<int>(r.overall * 100));
            std::fflush(stderr);
            return true;
        };
    // The progress line ends before whatever comes next, an error message included.
    struct EndLine {
        bool active;
        ~EndLine() {
            if (active) std::fprintf(stderr, "\n");
        }
    } endLine{static_cast<bool>(progress)};
    return quantizeModel(request, progress);
}

std::string describeQuantized(const QuantizeResult& result, const std::string& type, bool int8Activations) {
    return fmt::format("quantized {} weights to {}: {:.1f} MB -> {:.1f} MB; registered as {} ({})\n", result.quantizedWeights,
                       type == "fp8"     ? "FP8 (E4M3)"
                       : int8Activations ? "int8, activations int8 per token (W8A8)"
                                         : "int8",
                       result.bytesBefore / 1e6, result.bytesAfter / 1e6, result.model.id, result.model.dir.string());
}

std::string quantizeType(const QString& value) {
    if (value != "int8" && value != "fp8") throw UsageError("--to must be int8 or fp8, not '" + value.toStdString() + "'");
    return value.toStdString();
}

int runQuantize(const QStringList& args) {
    CommandLine cmd(
        QStringLiteral("dragoman-cli quantize"),
        QStringLiteral("Write a copy of a model whose linear weights and embedding tables are int8 or FP8 (E4M3), one scale per "
                       "output channel (compressed-tensors layout), and register it. Half the bytes of bf16 per token."));
    cmd.addOption(modelOption());
    cmd.addOption({QStringLiteral("to"), QStringLiteral("int8 or fp8"), QStringLiteral("TYPE")});
    cmd.addOption({QStringLiteral("out"), QStringLiteral("A new or empty folder for the copy (default: in Dragoman's cache)"),
                   QStringLiteral("DIR")});
    cmd.addOption({QStringLiteral("id"), QStringLiteral("Id of the copy in the store (default: FOLDER-TYPE)"), QStringLiteral("ID")});
    cmd.addOption({QStringLiteral("strategy"), QStringLiteral("channel (default) or tensor: one scale per output channel or per weight"),
                   QStringLiteral("S"), QStringLiteral("channel")});
    cmd.addOption({QStringLiteral("activations"),
                   QStringLiteral("float (default) or int8: with --to int8, each token's activations quantized to int8 as well "
                                  "(W8A8, integer products; faster on CPUs with AVX512-VNNI, slightly different numbers)"),
                   QStringLiteral("A"), QStringLiteral("float")});
    cmd.addOption({QStringLiteral("keep-embeddings"),
                   QStringLiteral("Leave the embedding and output tables as they are (only the linear layers in 8 bits)")});
    if (!cmd.parse(args)) return kExitOk;
    if (!cmd.isSet("to")) throw UsageError("quantize needs --to int8 or --to fp8");
    QuantizeRequest request;
    request.model = modelArgument(cmd);
    request.type = quantizeType(cmd.value("to"));
    request.out = cmd.value("out").toStdString();
    request.id = cmd.value("id").toStdString();
    const auto strategy = cmd.value("strategy");
    if (strategy != "channel" && strategy != "tensor") throw UsageError("--strategy must be channel or tensor");
    request.perChannel = strategy == "channel";
    request.tables = !cmd.isSet("keep-embeddings");
    const auto activations = cmd.value("activations");
    if (activations != "float" && activations != "int8") throw UsageError("--activations must be float or int8");
    if (activations == "int8" && request.type != "int8") throw UsageError("--activations int8 needs --to int8");
    request.int8Activations = activations == "int8";
    print(describeQuantized(quantizeWithProgress(request), request.type, request.int8Activations));
    return kExitOk;
}

}  // namespace dragoman::cli
