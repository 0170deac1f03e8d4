#include "model_library.h"

#include "store/model_store.h"
#include "util/error.h"

#include <algorithm>

namespace dragoman {
namespace {

QString sourceLabel(ModelSource source) {
    return QString::fromUtf8(sourceName(source).data(), static_cast<int>(sourceName(source).size()));
}

}  // namespace

QString defaultModelId() {
    try {
        return QString::fromStdString(ModelStore().defaultModel().id);
    } catch (const Error&) {
        return {};
    }
}

QList<ModelChoice> availableModels() {
    QList<ModelChoice> choices;
    try {
        auto entries = ModelStore().list();
        std::stable_sort(entries.begin(), entries.end(), [](const ModelEntry& a, const ModelEntry& b) {
            return (a.source == ModelSource::Bundled) > (b.source == ModelSource::Bundled);
        });
        for (const auto& e : entries) {
            const auto id = QString::fromStdString(e.id), source = sourceLabel(e.source);
            const auto kind = QString::fromStdString(e.modelType.empty() ? e.architecture : e.modelType);
            choices.push_back({id, QStringLiteral("%1 (%2, %3)").arg(id, kind.isEmpty() ? QStringLiteral("?") : kind, source), source});
        }
    } catch (const Error&) {
        // An unreadable store lists nothing; the window says how to add a model.
    }
    return choices;
}

}  // namespace dragoman
