#include "remote/server_engines.h"

#include <QSettings>
#include <QUrl>

namespace dragoman {
namespace {

constexpr auto kGroup = "servers";

ServerEngine read(QSettings& settings, const QString& name) {
    settings.beginGroup(name);
    ServerEngine engine;
    engine.name = name;
    engine.url = settings.value("url").toString();
    engine.model = settings.value("model").toString();
    engine.keyFile = settings.value("keyFile").toString();
    engine.keyVariable = settings.value("keyVariable").toString();
    engine.timeoutSeconds = std::max(1, settings.value("timeoutSeconds", 60).toInt());
    settings.endGroup();
    return engine;
}

}  // namespace

QString ServerEngine::label() const {
    const auto where = name.isEmpty() ? QUrl::fromUserInput(url).host() : name;
    return model.isEmpty() ? QStringLiteral("Server ") + where : model.section('/', -1) + QStringLiteral(" on ") + where;
}

bool isServerEngineId(const QString& id) {
    return id.startsWith(QStringLiteral("server:"));
}

QList<ServerEngine> savedServerEngines() {
    QSettings settings;
    settings.beginGroup(kGroup);
    QList<ServerEngine> engines;
    for (const auto& name : settings.childGroups())
        engines << read(settings, name);
    settings.endGroup();
    return engines;
}

std::optional<ServerEngine> savedServerEngine(const QString& nameOrId) {
    const auto name = isServerEngineId(nameOrId) ? nameOrId.mid(7) : nameOrId;
    for (const auto& engine : savedServerEngines())
        if (engine.name == name) return engine;
    return std::nullopt;
}

void saveServerEngine(const ServerEngine& engine) {
    const auto name = engine.name.trimmed();
    if (name.isEmpty() || name.contains('/') || name.contains('\\'))
        throw Error("input", "a server needs a name without slashes, such as gpu-box");
    const auto url = QUrl::fromUserInput(engine.url);
    if (!url.isValid() || (url.scheme() != "http" && url.scheme() != "https") || url.host().isEmpty())
        throw Error("input", "the server's address must be an http:// or https:// URL, not '" + engine.url.toStdString() + "'");
    QSettings settings;
    settings.beginGroup(kGroup);
    settings.remove(name);
    settings.beginGroup(name);
    settings.setValue("url", engine.url.trimmed());
    settings.setValue("model", engine.model.trimmed());
    settings.setValue("keyFile", engine.keyFile.trimmed());
    settings.setValue("keyVariable", engine.keyVariable.trimmed());
    settings.setValue("timeoutSeconds", std::max(1, engine.timeoutSeconds));
    settings.endGroup();
    settings.endGroup();
}

void removeServerEngine(const QString& name) {
    QSettings settings;
    settings.beginGroup(kGroup);
    settings.remove(name);
    settings.endGroup();
}

RemoteSettings remoteSettingsOf(const ServerEngine& engine) {
    auto settings = remoteSettings(engine.url, engine.keyFile, engine.model);
    if (engine.keyFile.isEmpty() && !engine.keyVariable.isEmpty()) {
        const auto key = qEnvironmentVariable(engine.keyVariable.toUtf8().constData()).trimmed();
        if (key.isEmpty())
            throw Error("io", "the environment variable " + engine.keyVariable.toStdString() + " that holds the API key is not set");
        settings.apiKey = key;
    }
    settings.idleTimeoutMs = std::max(1, engine.timeoutSeconds) * 1000;
    return settings;
}

}  // namespace dragoman
