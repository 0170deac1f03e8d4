#include "model_library.h"

#include "dragoman.h"

#include <algorithm>

namespace dragoman {

QString defaultModelId() {
    const auto id = findDefaultModel();
    return id ? QString::fromStdString(*id) : QString();
}

QList<ModelChoice> availableModels() {
    QList<ModelChoice> choices;
    try {
        auto models = listModels();
        std::stable_sort(models.begin(), models.end(),
                         [](const ModelListing& a, const ModelListing& b) { return (a.source == "bundled") > (b.source == "bundled"); });
        for (const auto& m : models) {
            if (m.modelType == "peft_lora") continue;  // adapters go on top of a model, not in its place
            const auto id = QString::fromStdString(m.id), source = QString::fromStdString(m.source);
            const auto kind = QString::fromStdString(m.modelType.empty() ? m.architecture : m.modelType);
            choices.push_back({id, QStringLiteral("%1 (%2, %3)").arg(id, kind.isEmpty() ? QStringLiteral("?") : kind, source), source});
        }
    } catch (const Error&) {
        // An unreadable store lists nothing; the window says how to add a model.
    }
    return choices;
}

bool isBaseOf(const QString& base, const QString& id) {
    const auto lastPart = [](const QString& name) { return name.section('/', -1, -1, QString::SectionSkipEmpty); };
    return lastPart(base) == lastPart(id);
}

QList<ModelChoice> availableAdapters(const QString& baseId) {
    QList<ModelChoice> choices;
    try {
        for (const auto& m : listModels()) {
            if (m.modelType != "peft_lora") continue;
            const auto id = QString::fromStdString(m.id), source = QString::fromStdString(m.source);
            const auto base = m.base.empty() ? QStringLiteral("?") : QString::fromStdString(m.base);
            if (!baseId.isEmpty() && !m.base.empty() && !isBaseOf(base, baseId)) continue;
            choices.push_back({id, QStringLiteral("%1 (for %2)").arg(id, base), source});
        }
    } catch (const Error&) {
        // An unreadable store lists nothing.
    }
    return choices;
}

}  // namespace dragoman
