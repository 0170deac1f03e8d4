#include "cli/command_line.h"
#include "devcli/dev_commands.h"
#include "io/safetensors.h"

#include <fmt/format.h>

namespace dragoman::cli {

// inspect FILE.safetensors: one line per tensor, "NAME DTYPE [d0,d1,...] BEGIN END", in data order.
int runInspect(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli inspect"), QStringLiteral("Validate a .safetensors file and list its tensors."));
    cmd.addPositional(QStringLiteral("file"), QStringLiteral("The .safetensors file"), QStringLiteral("FILE.safetensors"));
    if (!cmd.parse(args, 1, 1)) return kExitOk;

    const auto file = SafetensorsFile::open(cmd.positional().front().toStdString());
    std::string out;
    for (const auto& t : file->tensors())
        out += fmt::format("{} {} [{}] {} {}\n", t.name, dtypeName(t.dtype), fmt::join(t.shape, ","), t.begin, t.end);
    print(out);
    return kExitOk;
}

}  // namespace dragoman::cli
