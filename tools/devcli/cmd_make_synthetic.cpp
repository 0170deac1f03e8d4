#include "cli/command_line.h"
#include "devcli/dev_commands.h"
#include "synthetic/synthetic_checkpoint.h"

namespace dragoman::cli {

int runMakeSynthetic(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli make-synthetic"),
                    QStringLiteral("Write a random-weight checkpoint with real shapes (config.json + model.safetensors)."));
    cmd.addOption({QStringLiteral("arch"), QStringLiteral("hunyuan | marian"), QStringLiteral("ARCH")});
    cmd.addOption({QStringLiteral("preset"), QStringLiteral("hy-mt1.5-1.8b | hy-mt1.5-7b | opus-mt-base | tiny"), QStringLiteral("P")});
    cmd.addOption({QStringLiteral("dtype"), QStringLiteral("bf16 | f32"), QStringLiteral("T")});
    cmd.addOption({QStringLiteral("out"), QStringLiteral("Output folder"), QStringLiteral("DIR")});
    cmd.addOption({QStringLiteral("seed"), QStringLiteral("Random seed (default 0)"), QStringLiteral("S")});
    if (!cmd.parse(args)) return kExitOk;
    for (const char* required : {"arch", "preset", "dtype", "out"})
        if (!cmd.isSet(required)) throw UsageError(std::string("--") + required + " is required");
    const std::string arch = cmd.value("arch").toStdString();
    const std::string preset = cmd.value("preset").toStdString();
    const auto presets = syntheticPresets(arch);
    if (presets.empty()) throw UsageError("unknown --arch '" + arch + "' (hunyuan, marian)");
    if (std::find(presets.begin(), presets.end(), preset) == presets.end())
        throw UsageError("unknown --preset '" + preset + "' for " + arch);
    const std::string dtype = cmd.value("dtype").toStdString();
    if (dtype != "bf16" && dtype != "f32") throw UsageError("unknown --dtype '" + dtype + "' (bf16, f32)");
    const auto seed = static_cast<std::uint64_t>(cmd.intValue("seed", 0, 0, std::numeric_limits<long long>::max()));
    writeSyntheticCheckpoint({arch, preset, dtype, seed}, cmd.value("out").toStdString());
    print(cmd.value("out") + "\n");
    return kExitOk;
}

}  // namespace dragoman::cli
