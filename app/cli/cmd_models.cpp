#include "cli/command_line.h"
#include "cli/commands.h"
#include "store/model_store.h"
#include "util/error.h"
#include "util/text.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace dragoman::cli {
namespace {

int listModels(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli models list"), QStringLiteral("List the models Dragoman can load."));
    cmd.addOption({QStringLiteral("json"), QStringLiteral("Print one JSON object")});
    if (!cmd.parse(args)) return kExitOk;
    const ModelStore store;
    const auto models = store.list();
    if (cmd.isSet("json")) {
        nlohmann::json out{{"models", nlohmann::json::array()}};
        for (const auto& m : models)
            out["models"].push_back({{"id", m.id},
                                     {"source", sourceName(m.source)},
                                     {"architecture", m.architecture},
                                     {"model_type", m.modelType},
                                     {"bytes", m.weightBytes},
                                     {"dir", m.dir.string()},
                                     {"revision", m.revision}});
        print(out.dump() + "\n");
        return kExitOk;
    }
    if (models.empty()) {
        print(
            fmt::format("No models found. Looked in {} (ours) and {} (Hugging Face).\n"
                        "Add one with: dragoman-cli models import DIR\n",
                        store.roots().cache.string(), store.roots().hub.string()));
        return kExitOk;
    }
    std::string text;
    for (const auto& m : models)
        text += fmt::format("{:<40} {:<9} {:<28} {:>9.1f} MB  {}\n", m.id, sourceName(m.source),
                            m.architecture.empty() ? "?" : m.architecture, m.weightBytes / 1e6, m.dir.string());
    print(text);
    return kExitOk;
}

int importModel(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli models import"),
                    QStringLiteral("Register a model folder (Hugging Face layout) in place: its files are hashed once."));
    cmd.addPositional(QStringLiteral("dir"), QStringLiteral("Model folder"), QStringLiteral("DIR"));
    cmd.addOption({QStringLiteral("id"), QStringLiteral("Id to register it under (default: folder name)"), QStringLiteral("ID")});
    if (!cmd.parse(args, 1, 1)) return kExitOk;
    const ModelStore store;
    const auto entry = store.importModel(cmd.positional().front().toStdString(), cmd.value("id").toStdString());
    print(fmt::format("imported {} ({}, {:.1f} MB) from {}\n", entry.id, entry.architecture, entry.weightBytes / 1e6, entry.dir.string()));
    return kExitOk;
}

int verifyModel(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli models verify"),
                    QStringLiteral("Check a model's files against its manifest (size and mtime; --full re-hashes)."));
    cmd.addPositional(QStringLiteral("model"), QStringLiteral("Model id or folder"), QStringLiteral("M"));
    cmd.addOption({QStringLiteral("full"), QStringLiteral("Re-hash every file (SHA-256)")});
    if (!cmd.parse(args, 1, 1)) return kExitOk;
    const ModelStore store;
    const auto entry = store.resolve(cmd.positional().front().toStdString());
    auto manifest = store.ensureManifest(entry);
    const auto stale = statMismatches(manifest);
    // With --full the content decides: files rewritten with the same bytes (new times) are recorded again, and load.
    const auto problems = cmd.isSet("full") ? hashMismatches(manifest) : stale;
    const bool rerecorded = cmd.isSet("full") && problems.empty() && !stale.empty();
    if (rerecorded) {
        recordCurrentTimes(manifest);
        writeManifest(store.manifestPath(entry), manifest);
    }
    if (!problems.empty()) throw Error("integrity", entry.id + ": " + joinProblems(problems));
    print(fmt::format("ok: {} ({} files, {:.1f} MB{}{})\n", entry.id, manifest.files.size(), manifest.totalBytes() / 1e6,
                      cmd.isSet("full") ? ", all re-hashed" : ", sizes and times match",
                      rerecorded ? "; content unchanged, new file times recorded" : ""));
    return kExitOk;
}

}  // namespace

int runModels(const QStringList& args) {
    const QString action = args.value(1);
    const QStringList rest = actionArgs(args);
    if (action == "list") return listModels(rest);
    if (action == "import") return importModel(rest);
    if (action == "verify") return verifyModel(rest);
    if (action == "--help" || action == "-h") {
        print(QStringLiteral("Usage: dragoman-cli models list [--json] | import DIR [--id ID] | verify M [--full]\n"));
        return kExitOk;
    }
    throw UsageError(action.isEmpty() ? "models needs an action: list, import or verify"
                                      : "unknown models action '" + action.toStdString() + "' (list, import, verify)");
}

}  // namespace dragoman::cli
