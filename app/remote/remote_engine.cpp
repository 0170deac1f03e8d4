#include "remote/remote_engine.h"

#include "dragoman.h"
#include "remote/chat_stream.h"

#include <QEventLoop>
#include <QFile>
#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QThread>
#include <QTimer>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>

namespace dragoman {
namespace {

using json = nlohmann::json;

QUrl endpoint(const QUrl& base, const QString& path) {
    auto url = base;
    auto prefix = url.path();
    while (prefix.endsWith('/'))
        prefix.chop(1);
    if (!prefix.endsWith(QStringLiteral("/v1"))) prefix += QStringLiteral("/v1");
    url.setPath(prefix + path);
    return url;
}

struct Exchange {
    int status = 0;
    QByteArray body;  // the whole body, or what came before streaming began
    QNetworkReply::NetworkError error = QNetworkReply::NoError;
    QString errorText;
    bool cancelled = false, timedOut = false;
};

// One request in a local event loop, to its end. `onChunk` (a 200 answer only) gets the body as it arrives and
// returns false to close the connection; `cancel` is polled.
Exchange exchange(const QNetworkRequest& request, const QByteArray* body, const CancelToken* cancel, int idleTimeoutMs,
                  const std::function<bool(const QByteArray&)>& onChunk) {
    QNetworkAccessManager network;
    QEventLoop loop;
    QNetworkReply* reply = body ? network.post(request, *body) : network.get(request);
    Exchange result;
    QTimer idle, poll;
    idle.setSingleShot(true);
    idle.start(idleTimeoutMs);
    poll.start(50);
    QObject::connect(reply, &QNetworkReply::readyRead, [&] {
        idle.start(idleTimeoutMs);
        const auto data = reply->readAll();
        if (onChunk && reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt() == 200) {
            if (!onChunk(data)) {
                result.cancelled = true;
                reply->abort();
            }
        } else {
            result.body += data;
        }
    });
    QObject::connect(&idle, &QTimer::timeout, [&] {
        result.timedOut = true;
        reply->abort();
    });
    QObject::connect(&poll, &QTimer::timeout, [&] {
        if (cancel && cancel->cancelled()) {
            result.cancelled = true;
            reply->abort();
        }
    });
    QObject::connect(reply, &QNetworkReply::finished, &loop, &QEventLoop::quit);
    if (!reply->isFinished()) loop.exec();
    result.status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    result.body += reply->readAll();
    result.error = reply->error();
    result.errorText = reply->errorString();
    delete reply;
    return result;
}

std::string where(const QUrl& url) {
    return url.toDisplayString(QUrl::RemoveUserInfo).toStdString();
}

// The message of an OpenAI-style error body, or the start of whatever came.
std::string serverMessage(const QByteArray& body) {
    try {
        const auto j = json::parse(body.toStdString());
        if (j.contains("error") && j["error"].is_object() && j["error"].contains("message"))
            return j["error"]["message"].get<std::string>();
        if (j.contains("error") && j["error"].is_string()) return j["error"].get<std::string>();
    } catch (const json::exception&) {
    }
    return body.left(200).toStdString();
}

// The fault of a finished exchange, as one clear error (none for a complete 200 answer).
void throwFault(const Exchange& e, const QUrl& url, int idleTimeoutMs) {
    if (e.timedOut) throw Error("remote", where(url) + " sent nothing for " + std::to_string(idleTimeoutMs / 1000) + " s");
    if (e.status == 0) throw Error("remote", "cannot reach " + where(url) + ": " + e.errorText.toStdString());
    if (e.status == 401 || e.status == 403)
        throw Error("remote", where(url) + " refused the API key (HTTP " + std::to_string(e.status) + "): " + serverMessage(e.body));
    if (e.status != 200) throw Error("remote", where(url) + " answered HTTP " + std::to_string(e.status) + ": " + serverMessage(e.body));
    if (e.error != QNetworkReply::NoError)
        throw Error("remote", "the connection to " + where(url) + " broke: " + e.errorText.toStdString());
}

QNetworkRequest requestFor(const QUrl& url, const RemoteSettings& settings) {
    QNetworkRequest request(url);
    request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
    if (!settings.apiKey.isEmpty()) request.setRawHeader("Authorization", "Bearer " + settings.apiKey.toUtf8());
    return request;
}

// A 429 or 503 before any token: the server is busy now, so the request is tried again, waiting longer each time.
bool busy(const Exchange& e) {
    return e.status == 429 || e.status == 503;
}

}  // namespace

RemoteSettings remoteSettings(const QString& url, const QString& apiKeyFile, const QString& model) {
    RemoteSettings settings;
    settings.base = QUrl::fromUserInput(url);
    if (!settings.base.isValid() || (settings.base.scheme() != "http" && settings.base.scheme() != "https"))
        throw Error("input", "--server needs an http:// or https:// URL, not '" + url.toStdString() + "'");
    if (!apiKeyFile.isEmpty()) {
        requireRegularFile(apiKeyFile.toStdString());
        QFile file(apiKeyFile);
        if (!file.open(QIODevice::ReadOnly)) throw Error("io", "cannot read the API key file " + apiKeyFile.toStdString());
        settings.apiKey = QString::fromUtf8(file.readLine(4096)).trimmed();
    }
    settings.model = model;
    return settings;
}

std::vector<ServerModel> listServerModels(const RemoteSettings& settings, const CancelToken& cancel) {
    const auto url = endpoint(settings.base, QStringLiteral("/models"));
    const auto e = exchange(requestFor(url, settings), nullptr, &cancel, settings.idleTimeoutMs, {});
    if (e.cancelled) throw Cancelled("stopped while asking " + where(url) + " for its models");
    throwFault(e, url, settings.idleTimeoutMs);
    std::vector<ServerModel> list;
    try {
        const auto models = json::parse(e.body.toStdString()).at("data");
        if (!models.is_array() || models.empty()) throw Error("remote", where(url) + " lists no models");
        for (const auto& m : models) {
            ServerModel model;
            model.id = QString::fromStdString(m.at("id").get<std::string>());
            // A Dragoman server says which models are not chat models; vLLM and SGLang serve chat models.
            model.chat = m.value("chat", true);
            model.dragoman = m.value("owned_by", "") == "dragoman";
            model.translationOptions = model.dragoman && m.value("translation_options", false);
            model.promptProfile = m.value("prompt_profile", promptProfileForName(model.id.toStdString()));
            if (m.contains("parent") && m["parent"].is_string()) model.parent = QString::fromStdString(m["parent"].get<std::string>());
            list.push_back(std::move(model));
        }
    } catch (const json::exception& x) {
        throw Error("remote", where(url) + " answered something that is not a model list: " + std::string(x.what()));
    }
    return list;
}

RemoteEngine::RemoteEngine(RemoteSettings settings, const CancelToken& cancel) : settings_(std::move(settings)) {
    for (const auto& m : listServerModels(settings_, cancel)) {
        if (!settings_.model.isEmpty() && m.id != settings_.model) continue;
        model_ = m.id;
        chat_ = m.chat;
        dragoman_ = m.dragoman;
        translationOptions_ = m.translationOptions;
        profile_ = m.promptProfile;
        break;
    }
    if (model_.isEmpty())
        throw Error("remote", where(endpoint(settings_.base, {})) + " has no model '" + settings_.model.toStdString() + "'");
}

std::vector<std::string> RemoteEngine::targetLanguages(const CancelToken& cancel) const {
    std::vector<std::string> codes;
    // A translation model behind Dragoman lists its pairs LibreTranslate's way; a chat model takes HY-MT's 38.
    if (dragoman_ && !chat_) {
        auto root = settings_.base;
        auto path = root.path();
        while (path.endsWith('/'))
            path.chop(1);
        if (path.endsWith(QStringLiteral("/v1"))) path.chop(3);
        root.setPath(path + QStringLiteral("/languages"));
        const auto e = exchange(requestFor(root, settings_), nullptr, &cancel, settings_.idleTimeoutMs, {});
        try {
            if (e.status == 200)
                for (const auto& language : json::parse(e.body.toStdString()))
                    for (const auto& target : language.value("targets", json::array()))
                        if (std::find(codes.begin(), codes.end(), target.get<std::string>()) == codes.end())
                            codes.push_back(target.get<std::string>());
        } catch (const json::exception&) {
            codes.clear();
        }
        if (!codes.empty()) return codes;
    }
    for (const auto& language : allLanguages())
        codes.push_back(language.code);
    return codes;
}

std::string RemoteEngine::translate(const TranslationRequest& request) const {
    if (request.beams > 1) throw Error("unsupported", "beam search is not available through a server");
    // Everything but sampling and formatted text travels in Dragoman's translation extension, where the server
    // takes it (an older `serve` would drop the fields it does not know: it gets the prompt instead).
    const bool options = !request.glossary.empty() || !request.context.empty() || !request.style.empty() || !request.preferences.empty() ||
                         request.keepDelimiters || !request.structuredFormat.empty() || !request.promptProfile.empty();
    // A Dragoman server samples a translation itself (its extension's "sample"), as the local engine does.
    const bool prompted = request.formatted || (request.sample && !dragoman_) || ((options || request.sample) && !translationOptions_);
    // A Dragoman server translates a line itself when the request names its languages, exactly as the local
    // engine; other servers (and requests only a prompt can carry) get the HY-MT prompt line by line.
    if (request.text.find_first_not_of(" \t\r\n") == std::string::npos)  // blank lines stay blank, as locally
        return std::string(static_cast<std::size_t>(std::count(request.text.begin(), request.text.end(), '\n')), '\n');
    if (dragoman_ && !prompted) return complete(request, request.text, false);
    if (!chat_) throw Error("unsupported", model_.toStdString() + " on the server is not a chat model: no glossary, context or sampling");
    auto prompting = request;
    if (prompting.promptProfile.empty()) prompting.promptProfile = profile_;
    chatTranslationMessage(prompting, "");  // refuses what the templates cannot say before anything is sent
    if (!request.structuredFormat.empty()) return chatTranslationAnswer(prompting, complete(prompting, request.text, true));
    std::string output;
    std::size_t begin = 0;
    while (true) {
        const auto end = request.text.find('\n', begin);
        const auto line = request.text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
        if (line.find_first_not_of(" \t\r") != std::string::npos)
            output += chatTranslationAnswer(prompting, complete(prompting, line, true));
        if (end == std::string::npos) break;
        output += '\n';
        if (request.onDelta && !request.onDelta("\n")) break;
        begin = end + 1;
    }
    return output;
}

std::string RemoteEngine::complete(const TranslationRequest& request, const std::string& message, bool prompt) const {
    json body{{"model", model_.toStdString()}, {"stream", true}};
    body["messages"] = json::array({{{"role", "user"}, {"content", prompt ? chatTranslationMessage(request, message) : message}}});
    if (!prompt) {
        body["target_lang"] = request.to;
        if (!request.from.empty()) body["source_lang"] = request.from;
        if (!request.glossary.empty()) body["glossary"] = request.glossary;
        if (!request.context.empty()) body["context"] = request.context;
        if (!request.style.empty()) body["style"] = request.style;
        if (!request.preferences.empty()) body["preferences"] = request.preferences;
        if (request.keepDelimiters) body["keep_delimiters"] = true;
        if (!request.structuredFormat.empty()) body["structured_format"] = request.structuredFormat;
        if (!request.promptProfile.empty()) body["prompt_profile"] = request.promptProfile;
    }
    if (request.sample) {
        body["seed"] = request.seed;
        // Sampled as the model's generation config says, as locally: a Dragoman server takes its extension's flag;
        // another server samples with its own defaults where no temperature is named.
        if (dragoman_) body["sample"] = true;
    } else {
        body["temperature"] = 0;
    }
    const auto payload = QByteArray::fromStdString(body.dump(-1, ' ', false, json::error_handler_t::replace));
    const auto url = endpoint(settings_.base, QStringLiteral("/chat/completions"));
    for (int attempt = 0;; ++attempt) {
        ChatStreamReader reader;
        auto onChunk = [&](const QByteArray& chunk) {
            return reader.feed(std::string_view(chunk.constData(), static_cast<std::size_t>(chunk.size())), request.onDelta);
        };
        const auto e = exchange(requestFor(url, settings_), &payload, &request.cancel, settings_.idleTimeoutMs, onChunk);
        if (!reader.errorEvent().empty())
            throw Error("remote", "the server stopped the answer: " + serverMessage(QByteArray::fromStdString(reader.errorEvent())));
        if (!reader.failure().empty()) throw Error("remote", reader.failure() + " (from " + where(url) + ")");
        if (e.cancelled) return reader.text();  // stopped by the caller: the text so far
        if (busy(e) && reader.text().empty() && attempt < settings_.retries) {
            QThread::msleep(static_cast<unsigned long>(250 << attempt));
            continue;
        }
        throwFault(e, url, settings_.idleTimeoutMs);
        if (!reader.done()) throw Error("remote", "the answer from " + where(url) + " ended before it was complete");
        return reader.text();
    }
}

}  // namespace dragoman
