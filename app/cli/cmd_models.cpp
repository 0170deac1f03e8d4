#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/quantize_copy.h"
#include "dragoman.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dragoman::cli {
namespace {

int listCommand(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli models list"), QStringLiteral("List the models Dragoman can load."));
    cmd.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object")});
    if (!cmd.parse(args)) return kExitOk;
    const auto models = listModels();
    if (cmd.isSet("json")) {
        nlohmann::json out{{"models", nlohmann::json::array()}};
        for (const auto& m : models)
            out["models"].push_back({{"id", m.id},
                                     {"source", m.source},
                                     {"architecture", m.architecture},
                                     {"model_type", m.modelType},
                                     {"bytes", m.weightBytes},
                                     {"dir", m.dir.string()},
                                     {"revision", m.revision},
                                     {"base", m.base},
                                     {"quantization", m.quantization}});
        print(out.dump() + "\n");
        return kExitOk;
    }
    if (models.empty()) {
        print(
            fmt::format("No models found. Looked in {} (ours) and {} (Hugging Face).\n"
                        "Add one with: dragoman-cli models import DIR\n",
                        storeLocations().cache.string(), storeLocations().hub.string()));
        return kExitOk;
    }
    std::string text;
    for (const auto& m : models) {
        const auto kind = m.modelType == "peft_lora" ? "LoRA adapter for " + (m.base.empty() ? std::string("?") : m.base)
                                                     : (m.architecture.empty() ? std::string("?") : m.architecture) +
                                                           (m.quantization.empty() ? std::string() : ", " + m.quantization);
        text += fmt::format("{:<40} {:<9} {:<28} {:>9.1f} MB  {}\n", m.id, m.source, kind, m.weightBytes / 1e6, m.dir.string());
    }
    print(text);
    return kExitOk;
}

int importCommand(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli models import"),
                    QStringLiteral("Register a model folder (Hugging Face layout) in place: its files are hashed once."));
    cmd.addPositional(QStringLiteral("dir"), QStringLiteral("Model folder"), QStringLiteral("DIR"));
    cmd.addOption({QStringLiteral("id"), QStringLiteral("Id to register it under (default: folder name)"), QStringLiteral("ID")});
    cmd.addOption({QStringLiteral("quantize"),
                   QStringLiteral("Register a smaller copy instead, with int8 or fp8 weights, written into Dragoman's cache"),
                   QStringLiteral("TYPE")});
    if (!cmd.parse(args, 1, 1)) return kExitOk;
    if (cmd.isSet("quantize")) {
        QuantizeRequest request;
        request.model = cmd.positional().front().toStdString();
        request.type = quantizeType(cmd.value("quantize"));
        request.id = cmd.value("id").toStdString();
        print(describeQuantized(quantizeWithProgress(request), request.type));
        return kExitOk;
    }
    const auto entry = importModel(cmd.positional().front().toStdString(), cmd.value("id").toStdString());
    print(fmt::format("imported {} ({}, {:.1f} MB) from {}\n", entry.id, entry.architecture, entry.weightBytes / 1e6, entry.dir.string()));
    return kExitOk;
}

int verifyCommand(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli models verify"),
                    QStringLiteral("Check a model's files against its manifest (size and mtime; --full re-hashes)."));
    cmd.addPositional(QStringLiteral("model"), QStringLiteral("Model id or folder"), QStringLiteral("M"));
    cmd.addOption({QStringLiteral("full"), QStringLiteral("Re-hash every file (SHA-256)")});
    if (!cmd.parse(args, 1, 1)) return kExitOk;
    const bool full = cmd.isSet("full");
    // With --full the content decides: files rewritten with the same bytes (new times) are recorded again, and load.
    const auto report = verifyModel(cmd.positional().front().toStdString(), full);
    if (!report.problems.empty()) throw Error("integrity", report.describeProblems());
    print(fmt::format("ok: {} ({} files, {:.1f} MB{}{})\n", report.id, report.files, report.bytes / 1e6,
                      full ? ", all re-hashed" : ", sizes and times match",
                      report.rerecorded ? "; content unchanged, new file times recorded" : ""));
    return kExitOk;
}

int forgetCommand(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli models forget"),
                    QStringLiteral("Forget an imported model: its record goes, its folder is never touched."));
    cmd.addPositional(QStringLiteral("model"), QStringLiteral("Imported model id"), QStringLiteral("ID"));
    if (!cmd.parse(args, 1, 1)) return kExitOk;
    const auto forgotten = forgetModel(cmd.positional().front().toStdString());
    print(fmt::format("forgot {} ({} is left as it was)\n", forgotten.id, forgotten.dir.string()));
    return kExitOk;
}

}  // namespace

int runModels(const QStringList& args) {
    const QString action = args.value(1);
    const QStringList rest = actionArgs(args);
    if (action == "list") return listCommand(rest);
    if (action == "import") return importCommand(rest);
    if (action == "verify") return verifyCommand(rest);
    if (action == "forget") return forgetCommand(rest);
    if (action == "--help" || action == "-h") {
        print(QStringLiteral(
            "Usage: dragoman-cli models list [--json] | import DIR [--id ID] [--quantize int8|fp8] | verify M [--full] | forget ID\n"));
        return kExitOk;
    }
    throw UsageError(action.isEmpty() ? "models needs an action: list, import, verify or forget"
                                      : "unknown models action '" + action.toStdString() + "' (list, import, verify, forget)");
}

}  // namespace dragoman::cli
