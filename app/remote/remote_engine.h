#pragma once
// An OpenAI-compatible server (dragoman-cli serve, vLLM, SGLang) as the place translations are computed: each
// line goes out as one /v1/chat/completions request, streamed back as SSE deltas, over Qt Network. A chat
// model (HY-MT) gets the user message the local engine would render (dragoman.h: chatTranslationMessage), so a
// server running the same model greedily answers the same text; a translation model (OPUS-MT behind
// `dragoman-cli serve`, which marks it "chat": false in /v1/models) gets the line with source_lang/target_lang.
// Nothing is contacted but the configured server. Calls may come from several threads at once: each makes its
// own connection and runs its own event loop.
#include "dragoman.h"

#include <QString>
#include <QUrl>

#include <string>
#include <vector>

namespace dragoman {

struct RemoteSettings {
    QUrl base;                  // http://host:port, with or without /v1
    QString apiKey;             // sent as a bearer token; empty: none
    QString model;              // empty: the server's first model
    int idleTimeoutMs = 60000;  // no byte for this long: the request fails
    int retries = 3;            // a 429 or 503 before any token is retried this many times, waiting longer each time
};

// A model a server lists (GET /v1/models).
struct ServerModel {
    QString id;
    bool chat = true;                 // vLLM and SGLang serve chat models; Dragoman says which are not
    bool dragoman = false;            // served by `dragoman-cli serve`
    bool translationOptions = false;  // its translations take glossary, context, style, ... fields
    std::string promptProfile;        // what the server says, else what the name selects
    QString parent;                   // an adapter's base model, where the server names it
};
// Throws Error("remote") for a server that cannot be reached, refuses the key or answers garbage.
// `cancel` stops the request within ~50 ms (Cancelled).
std::vector<ServerModel> listServerModels(const RemoteSettings& settings, const CancelToken& cancel = {});

class RemoteEngine {
public:
    // Asks the server for its models (GET /v1/models) and picks `settings.model`. Throws Error("remote") for a
    // server that cannot be reached, refuses the key, answers garbage or lacks the model.
    // Throws Cancelled when `cancel` stops it first.
    explicit RemoteEngine(RemoteSettings settings, const CancelToken& cancel = {});

    const QString& model() const { return model_; }
    bool chat() const { return chat_; }
    const std::string& promptProfile() const { return profile_; }
    const RemoteSettings& settings() const { return settings_; }
    // What the model can be asked to translate into: a Dragoman translation model's pairs (GET /languages), else
    // HY-MT's languages.
    std::vector<std::string> targetLanguages(const CancelToken& cancel = {}) const;
    // As Model::translate: one output line per input line (empty lines stay empty), deltas through
    // request.onDelta, request.cancel closes the connection. Throws Error("remote") for any fault of the
    // server or the connection, Error("input") for a request the prompt cannot express.
    std::string translate(const TranslationRequest& request) const;

private:
    // One streamed completion: `message` as the user message (prompt: rendered as HY-MT's for a chat model; else
    // with the request's languages, for a Dragoman server to translate).
    std::string complete(const TranslationRequest& request, const std::string& message, bool prompt) const;

    RemoteSettings settings_;
    QString model_;
    bool chat_ = true;
    bool dragoman_ = false;  // the server is `dragoman-cli serve`
    bool translationOptions_ = false;
    std::string profile_;  // the prompts the server's model takes: what it says, else what its name selects
};

// The settings of --server URL [--api-key-file F] [--server-model NAME]: the key file's first line.
// Throws Error("io") for an unreadable key file.
RemoteSettings remoteSettings(const QString& url, const QString& apiKeyFile, const QString& model);

}  // namespace dragoman
