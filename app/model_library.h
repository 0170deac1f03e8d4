#pragma once
// The models the application can offer, for the Qt side (ui never includes engine headers).
#include <QList>
#include <QString>

namespace dragoman {

struct ModelChoice {
    QString id;      // what EngineWorker::requestLoad takes
    QString label;   // for a picker: id, architecture and where it comes from
    QString source;  // as the store names it: bundled, cache, imported, hub, path
};

// The id of the default (bundled) model, or an empty string when none is installed.
QString defaultModelId();
// Every model the store knows (bundled first, then our cache, then the Hugging Face hub cache).
QList<ModelChoice> availableModels();
// The LoRA adapters the store knows (imported, or in our cache) made for `baseId` (compared by the last part of
// the name, so "tencent/HY-MT1.5-1.8B" matches a folder HY-MT1.5-1.8B), and those that do not name a base.
// An empty baseId lists them all.
QList<ModelChoice> availableAdapters(const QString& baseId = {});
// Whether an adapter's base (as its config names it) is model `id`: compared by the last part of the name.
bool isBaseOf(const QString& base, const QString& id);

}  // namespace dragoman
