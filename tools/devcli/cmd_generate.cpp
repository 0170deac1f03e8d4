#include "cli/command_line.h"
#include "devcli/dev_commands.h"
#include "devcli/dev_model_option.h"
#include "runtime/generate_ids.h"

namespace dragoman::cli {

// generate --model M --ids 1,2,3 --max-new-tokens N [--beams K] [--raw]: the generated ids, up to and including EOS.
int runGenerate(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli generate"), QStringLiteral("Generate token ids (greedy, or beam search)."));
    cmd.addOption(modelOption());
    cmd.addOption(adapterOption());
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
    const auto generated = generateIds(*model, ids, maxNew, beams, cmd.isSet("raw"), devAdapterFor(cmd, *model));
    print(joinIds(generated) + "\n");
    return kExitOk;
}

}  // namespace dragoman::cli
