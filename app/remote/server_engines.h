#pragma once
// The servers a person translates on from the window, beside local models (README: Translating on a server).
// Saved in QSettings under "servers/NAME"; the API key never is: only the file it is read from or the name of
// the environment variable that holds it.
#include "remote/remote_engine.h"

#include <QList>
#include <QString>

#include <optional>

namespace dragoman {

struct ServerEngine {
    QString name;             // "gpu-box": the picker's and the settings' key
    QString url;              // http://gpu-box:8000 (with or without /v1)
    QString model;            // the server's model or adapter; empty: its first
    QString keyFile;          // the API key is this file's first line, or
    QString keyVariable;      // this environment variable's value; neither: no key
    int timeoutSeconds = 60;  // no byte for this long: the request fails

    QString id() const { return QStringLiteral("server:") + name; }  // what the model picker loads
    QString label() const;                                           // "HY-MT1.5-7B on gpu-box"
};

bool isServerEngineId(const QString& id);
QList<ServerEngine> savedServerEngines();
// By name or id ("server:gpu-box").
std::optional<ServerEngine> savedServerEngine(const QString& nameOrId);
// Replaces a saved one of the same name. Throws Error("input") for an empty name or a URL that is not http(s).
void saveServerEngine(const ServerEngine& engine);
void removeServerEngine(const QString& name);
// The connection settings, the key read now. Throws Error("input") for a bad URL, Error("io") for a key file
// that cannot be read or an environment variable that is not set.
RemoteSettings remoteSettingsOf(const ServerEngine& engine);

}  // namespace dragoman
