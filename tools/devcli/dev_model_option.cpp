#include "devcli/dev_model_option.h"

#include "kernels/threads.h"
#include "runtime/device.h"

namespace dragoman::cli {

ModelEntry resolveModel(const CommandLine& cmd, const ModelStore& store) {
    return cmd.isSet("model") ? store.resolve(cmd.value("model").toStdString()) : store.defaultModel();
}

std::shared_ptr<RunnableModel> openModelOption(const CommandLine& cmd) {
    configureThreads();
    const ModelStore store;
    const auto entry = resolveModel(cmd, store);
    OpenOptions options;
    options.device = deviceOverride(options.device);
    return openModel(store, entry.id, options);
}

std::shared_ptr<const LoraSet> devAdapterFor(const CommandLine& cmd, const RunnableModel& model) {
    if (!cmd.isSet("adapter")) return nullptr;
    const auto dir = findAdapter(cmd.value("adapter").toStdString());
    return model.loadAdapter(dir, dir.filename().string());
}

std::vector<std::int64_t> parseIds(const QString& text, const char* option) {
    std::vector<std::int64_t> ids;
    if (text.trimmed().isEmpty()) return ids;
    for (const auto& part : text.split(',')) {
        bool ok = false;
        const auto id = part.trimmed().toLongLong(&ok);
        if (!ok || id < 0)
            throw UsageError(std::string("--") + option + " expects comma-separated token ids, got '" + part.toStdString() + "'");
        ids.push_back(id);
    }
    return ids;
}

std::string joinIds(const std::vector<std::int64_t>& ids) {
    std::string out;
    for (std::size_t i = 0; i < ids.size(); ++i)
        out += (i ? "," : "") + std::to_string(ids[i]);
    return out;
}

}  // namespace dragoman::cli
