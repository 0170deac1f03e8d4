#include "server/api_server.h"

#include "documents/document_translation.h"
#include "documents/text_formats.h"
#include "dragoman.h"
#include "language_list.h"
#include "server/admission_gate.h"
#include "server/api_error.h"
#include "server/client_watch.h"
#include "server/libretranslate_protocol.h"
#include "server/openai_protocol.h"
#include "server/stop_strings.h"

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>

#include <sys/socket.h>

namespace dragoman::server {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

void answerError(httplib::Response& res, int status, const std::string& code, const std::string& message) {
    res.status = status;
    res.set_content(errorBody(status, code, message), "application/json");
}

std::string bearerToken(const httplib::Request& req) {
    const auto header = req.get_header_value("Authorization");
    return header.rfind("Bearer ", 0) == 0 ? header.substr(7) : std::string();
}

// A request's body, read as it arrives and refused (413) as soon as it passes `limit`: httplib's own limit
// (set_payload_max_length) is judged from Content-Length alone, and a chunked body, or one without a length, was read
// whole into memory (gigabytes from one client). A refused body is left unread, so the connection closes after the
// answer.
std::string boundedBody(const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read, std::size_t limit) {
    const auto tooLarge = [&] {
        res.set_header("Connection", "close");
        return ApiError(413, "request_too_large", fmt::format("the body is over the limit of {} bytes", limit));
    };
    if (req.is_multipart_form_data()) {
        res.set_header("Connection", "close");
        throw ApiError(400, "invalid_request_error", "multipart/form-data bodies are not read: send JSON (or form fields, urlencoded)");
    }
    if (req.has_header("Content-Length")) {
        const auto length = req.get_header_value("Content-Length");
        std::uint64_t declared = 0;
        const auto [end, error] = std::from_chars(length.data(), length.data() + length.size(), declared);
        if (error == std::errc::result_out_of_range || (error == std::errc() && declared > limit)) throw tooLarge();
    }
    std::string body;
    bool over = false;
    const bool whole = read([&](const char* data, std::size_t length) {
        if (body.size() + length > limit) {
            over = true;
            return false;
        }
        body.append(data, length);
        return true;
    });
    if (over) throw tooLarge();
    if (!whole) {
        res.set_header("Connection", "close");
        throw ApiError(400, "invalid_request_error", "the body ended before its end (a broken chunk or a closed connection)");
    }
    return body;
}

// One line per request on stderr and in the log: what a server operator greps for.
void logRequest(const std::string& line) {
    static std::mutex mutex;
    logMessage(LogLevel::Info, line);
    std::lock_guard lock(mutex);
    std::fprintf(stderr, "%s\n", line.c_str());
}

// LibreTranslate's confidence is a percentage: CLD2 says only whether it is sure, so sure is 90, a guess from a few
// words or the script 50; a bilingual model's own source, when nothing could be told, 0.
LibreDetection libreDetection(const SourceGuess& guess) {
    if (guess.detected.empty()) return {guess.from.empty() ? std::string("und") : guess.from, 0};
    return {guess.from.empty() ? guess.detected : guess.from,
            guess.from == guess.detected || guess.from.empty() ? (guess.reliable ? 90.0 : 50.0) : 0.0};
}

}  // namespace

struct ApiServer::Impl {
    Impl(ServerConfig c, std::shared_ptr<const Model> m, std::map<std::string, std::shared_ptr<const LoraSet>> a)
        : config(std::move(c)), model(std::move(m)), adapters(std::move(a)), gate(config.maxRunning, config.maxWaiting) {}

    ServerConfig config;
    std::shared_ptr<const Model> model;
    std::map<std::string, std::shared_ptr<const LoraSet>> adapters;
    AdmissionGate gate;
    ClientWatch clients;  // each request's token, cancelled when its client leaves (outlives the handlers)
    httplib::Server http;
    std::atomic<std::uint64_t> requests{0};
    std::atomic<bool> draining{false};  // stopping: new requests are turned away, those in flight finish
    CancelToken stopping;               // cancelled when the stop's grace period is over (every request's token too)
    std::once_flag stopped;

    void routes();
    void chat(const httplib::Request& req, const std::string& body, httplib::Response& res);
    void libreTranslate(const httplib::Request& req, const std::string& body, httplib::Response& res);
    void libreDetect(const httplib::Request& req, const std::string& body, httplib::Response& res) const;
    void libreLanguages(httplib::Response& res) const;

    // A new token for the request, watched: cancelled when its client leaves or the server stops.
    std::shared_ptr<ClientWatch::Watched> watchClient(const httplib::Request& req, CancelToken token) {
        return clients.watch(connectedSocket(req.local_addr, req.local_port, req.remote_addr, req.remote_port), std::move(token));
    }

    // The adapter a request's `model` names: null for the base; ApiError(404) for anything else.
    std::shared_ptr<const LoraSet> adapterFor(const std::string& name) const {
        if (name == model->description().id) return nullptr;
        if (auto it = adapters.find(name); it != adapters.end()) return it->second;
        throw ApiError(404, "model_not_found", "the model '" + name + "' does not exist (GET /v1/models lists them)");
    }
    // A translation's languages, checked against the model before any work (so a stream never starts in error).
    void checkLanguages(TranslationRequest& r) const {
        const auto& d = model->description();
        if (d.targetLanguages.empty() && !d.fixedTo.empty()) {  // a bilingual model (a multilingual one names "mul")
            if (r.from.empty()) r.from = d.fixedFrom;
            if (r.to.empty()) r.to = d.fixedTo;
            if (r.from != d.fixedFrom || r.to != d.fixedTo)
                throw ApiError(400, "unsupported_language", d.id + " translates " + d.fixedFrom + " into " + d.fixedTo + " only");
            return;
        }
        if (r.to.empty()) throw ApiError(400, "invalid_request_error", "name the target language ('target_lang' or 'target')");
        if (std::find(d.targetLanguages.begin(), d.targetLanguages.end(), r.to) == d.targetLanguages.end())
            throw ApiError(400, "unsupported_language", d.id + " cannot translate into '" + r.to + "'");
    }
    std::shared_ptr<void> admit() {
        auto ticket = gate.enter();
        if (!ticket) throw ApiError(503, "queue_full", "the server is busy: every place in its queue is taken; try again shortly");
        return ticket;
    }
};

void ApiServer::Impl::routes() {
    // Judged from Content-Length before anything is stored: a longer body is skipped unread and answered 413
    // (the error handler below writes the JSON).
    http.set_payload_max_length(config.maxBodyBytes);
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
        if (draining) {
            answerError(res, 503, "shutting_down", "the server is stopping");
            res.set_header("Connection", "close");
            return httplib::Server::HandlerResponse::Handled;
        }
        if (!config.apiKey.empty() && req.path.rfind("/v1/", 0) == 0 && bearerToken(req) != config.apiKey) {
            answerError(res, 401, "invalid_api_key", "a valid API key is required (Authorization: Bearer KEY)");
            return httplib::Server::HandlerResponse::Handled;
        }
        return httplib::Server::HandlerResponse::Unhandled;
    });
    http.set_error_handler(
        httplib::Server::HandlerWithResponse([maxBodyBytes = config.maxBodyBytes](const httplib::Request& req, httplib::Response& res) {
            if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
            if (res.status == 404)
                answerError(res, 404, "not_found", "no route " + req.method + " " + req.path);
            else if (res.status == 413)
                answerError(res, 413, "request_too_large", fmt::format("the body is over the limit of {} bytes", maxBodyBytes));
            else
                answerError(res, res.status, "http_error", "the request could not be served (HTTP " + std::to_string(res.status) + ")");
            return httplib::Server::HandlerResponse::Handled;
        }));
    // One line for every request: the translating routes write theirs when they answer (tokens, times), the rest here,
    // and so does any request answered with an error (a 400 before any work, a 401, a 404, a 413, a 503).
    http.set_logger([](const httplib::Request& req, const httplib::Response& res) {
        const bool translating = req.path == "/v1/chat/completions" || req.path == "/translate";
        if (translating && res.status < 400) return;
        std::string code;
        try {
            if (res.status >= 400) code = nlohmann::json::parse(res.body).at("error").at("code").get<std::string>();
        } catch (const std::exception&) {
        }
        logRequest(fmt::format("request - {} {} status={}{}{}", req.method, req.path, res.status, code.empty() ? "" : " ", code));
    });
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr error) {
        try {
            std::rethrow_exception(error);
        } catch (const ApiError& e) {
            answerError(res, e.status, e.code, e.what());
        } catch (const nlohmann::json::exception& e) {  // a field of the wrong type deep in the body
            answerError(res, 400, "invalid_request_error", e.what());
        } catch (const Error& e) {
            answerError(res, e.category() == "input" || e.category() == "unsupported" ? 400 : 500, e.category(), e.detail());
        } catch (const std::exception& e) {
            answerError(res, 500, "internal_error", e.what());
        }
    });
    http.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
        std::vector<std::string> names;
        for (const auto& [name, adapter] : adapters)
            names.push_back(name);
        res.set_content(modelList(model->description().id, names, model->description().chat, model->description().promptProfile),
                        "application/json");
    });
    // Bodies through the content reader, whatever their framing (boundedBody).
    const auto limit = config.maxBodyBytes;
    http.Post("/v1/chat/completions",
              [this, limit](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
                  const YieldToKernelThreads yielding;  // the request's steps run on the model's threads (kernels/thread_roles.h)
                  chat(req, boundedBody(req, res, read, limit), res);
              });
    http.Post("/translate", [this, limit](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
        const YieldToKernelThreads yielding;
        libreTranslate(req, boundedBody(req, res, read, limit), res);
    });
    http.Get("/languages", [this](const httplib::Request&, httplib::Response& res) { libreLanguages(res); });
    http.Post("/detect", [this, limit](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
        libreDetect(req, boundedBody(req, res, read, limit), res);
    });
}

void ApiServer::Impl::chat(const httplib::Request& req, const std::string& body, httplib::Response& res) {
    const auto start = Clock::now();
    const auto call = parseChatCall(body);
    const auto id = ++requests;
    TranslationRequest r;
    r.requestId = id;
    r.adapter = adapterFor(call.model);
    // A request naming target_lang asks for a translation of its last user message (what Dragoman's remote
    // backend sends, so the answer is the local engine's); a chat model otherwise answers the conversation.
    for (const auto& m : call.messages)
        if (m.role != "system" && m.role != "developer" && m.role != "user" && m.role != "assistant")
            throw ApiError(400, "invalid_request_error", "unknown message role '" + m.role + "' (system, user or assistant)");
    r.maxNewTokens = call.maxTokens;  // a translation's over all its sentences
    // Sampled as the request says (temperature, top_p), or with `sample` as the model's generation config says (what
    // `translate --sample` does locally). Without a seed each sampled answer is drawn afresh, as OpenAI's are.
    r.sample = call.sample;
    r.seed = call.seed ? *call.seed : std::random_device{}();
    if (model->description().chat && call.targetLang.empty()) {
        if (call.messages.back().role != "user") throw ApiError(400, "invalid_request_error", "the last message must be the user's");
        r.messages = call.messages;
        r.temperature = call.temperature;
        r.topP = call.topP;
    } else {
        // A translation: the last user message, between the languages the request names.
        const auto last = std::find_if(call.messages.rbegin(), call.messages.rend(), [](const auto& m) { return m.role == "user"; });
        if (last == call.messages.rend()) throw ApiError(400, "invalid_request_error", "no user message to translate");
        r.text = last->content;
        r.from = call.sourceLang;
        r.to = call.targetLang;
        r.glossary = call.glossary;
        r.context = call.context;
        r.style = call.style;
        r.preferences = call.preferences;
        r.keepDelimiters = call.keepDelimiters;
        r.structuredFormat = call.structuredFormat;
        r.promptProfile = call.promptProfile;
        // What the prompt cannot say (an unknown profile, two instructions at once, a model without prompts) is a
        // 400 now, not an error event after a streamed 200.
        if (!r.glossary.empty() || !r.context.empty() || !r.style.empty() || !r.preferences.empty() || r.keepDelimiters ||
            !r.structuredFormat.empty() || !r.promptProfile.empty() || r.sample)
            model->prompts(r);
        checkLanguages(r);
    }
    const auto client = watchClient(req, r.cancel);
    auto ticket = admit();
    const ChatAnswer answer(fmt::format("chatcmpl-dragoman-{}", id), call.model);
    const std::string adapterName = r.adapter ? call.model : "-";
    auto logLine = [this, id, adapterName, start](const TranslationStats& stats, const char* outcome) {
        logRequest(fmt::format("request {} chat model={} adapter={} tokens_in={} tokens_out={} ttft_s={:.3f} total_s={:.3f} {}", id,
                               model->description().id, adapterName, stats.sourceTokens, stats.generatedTokens, stats.firstTokenSeconds,
                               secondsSince(start), outcome));
    };
    // By value: the streaming callback that keeps this runs after chat() has returned.
    // "length" where a cap cut the answer short (max_tokens, or the model's own maximum); an answer that ended by
    // itself on exactly the last token allowed is "stop", as OpenAI and vLLM say.
    auto finishReason = [](const TranslationStats& stats, bool stopped) { return !stopped && stats.truncated ? "length" : "stop"; };
    if (!call.stream) {
        // The answer is what the stop strings let through of the streamed pieces (it ends before the first one).
        StopStrings stops(call.stop);
        std::string text;
        r.onDelta = [&](std::string_view delta) {
            text += stops.push(delta);
            return !stops.stopped();
        };
        TranslationStats stats;
        if (!client->gone()) model->translate(r, &stats);
        if (stopping.cancelled()) throw ApiError(503, "shutting_down", "the server stopped before the answer was complete");
        if (client->gone()) {  // nobody to answer: its sequence left the batch when the client did
            logLine(stats, "client gone");
            return;
        }
        text += stops.finish();
        res.set_content(answer.whole(text, finishReason(stats, stops.stopped()), {stats.sourceTokens, stats.generatedTokens}),
                        "application/json");
        logLine(stats, "ok");
        return;
    }
    res.set_header("Cache-Control", "no-cache");
    res.set_chunked_content_provider("text/event-stream", [this, r, call, answer, ticket, client, logLine, finishReason](
                                                              std::size_t, httplib::DataSink& sink) mutable {
        const YieldToKernelThreads yielding;  // the stream is written after the handler returned
        StopStrings stops(call.stop);
        bool connected = sink.write(answer.roleEvent().data(), answer.roleEvent().size());
        auto send = [&](const std::string& event) { connected = connected && !client->gone() && sink.write(event.data(), event.size()); };
        r.onDelta = [&](std::string_view delta) {
            if (const auto shown = stops.push(delta); !shown.empty()) send(answer.deltaEvent(shown));
            return connected && !stops.stopped();  // a client gone: its sequence stops at once
        };
        TranslationStats stats;
        const char* outcome = "ok";
        try {
            model->translate(r, &stats);
            if (stopping.cancelled()) throw Error("cancelled", "the server stopped before the answer was complete");
            if (const auto rest = stops.finish(); !rest.empty()) send(answer.deltaEvent(rest));
            send(answer.finishEvent(finishReason(stats, stops.stopped())));
            if (call.includeUsage) send(answer.usageEvent({stats.sourceTokens, stats.generatedTokens}));
        } catch (const std::exception& e) {
            send(ChatAnswer::errorEvent(e.what()));
            outcome = "failed";
        }
        send(ChatAnswer::doneEvent());
        logLine(stats, connected ? outcome : "client gone");
        sink.done();
        return connected;
    });
}

void ApiServer::Impl::libreTranslate(const httplib::Request& req, const std::string& body, httplib::Response& res) {
    const auto start = Clock::now();
    const auto call = parseLibreCall(body, req.get_header_value("Content-Type"));
    if (!config.apiKey.empty() && call.apiKey != config.apiKey && bearerToken(req) != config.apiKey)
        throw ApiError(401, "invalid_api_key", "a valid API key is required ('api_key' or Authorization: Bearer KEY)");
    const auto id = ++requests;
    TranslationRequest r;
    r.requestId = id;
    r.from = call.source;
    r.to = call.target;
    checkLanguages(r);
    // "auto": each text's language, decided before any work, so a text the model cannot read fails the call whole.
    std::vector<std::string> sources(call.texts.size(), r.from);
    std::vector<LibreDetection> detected;
    if (call.source.empty()) {
        for (std::size_t i = 0; i < call.texts.size(); ++i) {
            // HTML: the words between the tags, not the markup's names, tell the language.
            std::string words = call.texts[i];
            if (call.html) {
                words.clear();
                for (const auto& segment : documents::segmentHtml(call.texts[i], r.to).segments)
                    words += segment + "\n";
            }
            const auto guess = sourceLanguageFor(words, model->description());
            if (guess.unreadable)
                throw ApiError(400, "unsupported_language", "text " + std::to_string(i + 1) + ": " + guess.reason + " (name 'source')");
            sources[i] = guess.from.empty() ? r.from : guess.from;
            detected.push_back(libreDetection(guess));
        }
    }
    const auto client = watchClient(req, r.cancel);
    auto ticket = admit();
    std::vector<std::string> translations;
    TranslationStats total;
    std::size_t current = 0;  // the text being translated
    // `formatted`: a segment with inline markup as tags, for HY-MT's formatted-text prompt.
    auto translate = [&](const std::string& text, bool formatted = false) {
        auto one = r;
        one.text = text;
        one.from = sources[current];
        one.formatted = formatted;
        TranslationStats stats;
        auto out = model->translate(one, &stats);
        total.sourceTokens += stats.sourceTokens;
        total.generatedTokens += stats.generatedTokens;
        if (total.firstTokenSeconds < 0) total.firstTokenSeconds = stats.firstTokenSeconds;
        return out;
    };
    for (; current < call.texts.size() && !client->gone(); ++current) {
        const auto& text = call.texts[current];
        if (!call.html) {
            translations.push_back(translate(text));
            continue;
        }
        // HTML: the text between tags is translated and the markup kept, inline markup (bold words, links) too, as
        // translate-file does.
        const auto doc = documents::segmentHtml(text, r.to);
        documents::DocumentRequest segments;
        segments.to = r.to;
        segments.translate = [&](const std::string& segment) { return translate(segment); };
        if (documents::takesFormattedPrompt(model->description().prompts, r))
            segments.translateFormatted = [&](const std::string& tagged) { return translate(tagged, true); };
        translations.push_back(doc.rebuild(documents::translateSegments(doc, segments)));
    }
    if (stopping.cancelled()) throw ApiError(503, "shutting_down", "the server stopped before the translation was complete");
    if (!client->gone()) res.set_content(libreAnswer(translations, call.list, detected), "application/json");
    logRequest(fmt::format("request {} translate model={} adapter=- tokens_in={} tokens_out={} ttft_s={:.3f} total_s={:.3f} {}", id,
                           model->description().id, total.sourceTokens, total.generatedTokens, total.firstTokenSeconds, secondsSince(start),
                           client->gone() ? "client gone" : "ok"));
}

void ApiServer::Impl::libreDetect(const httplib::Request& req, const std::string& body, httplib::Response& res) const {
    const auto call = parseLibreDetect(body, req.get_header_value("Content-Type"));
    if (!config.apiKey.empty() && call.apiKey != config.apiKey && bearerToken(req) != config.apiKey)
        throw ApiError(401, "invalid_api_key", "a valid API key is required ('api_key' or Authorization: Bearer KEY)");
    std::vector<LibreDetection> candidates;
    if (const auto found = detectLanguage(call.text)) {
        SourceGuess guess;
        guess.detected = found->code;
        guess.reliable = found->reliable;
        candidates.push_back(libreDetection(guess));
    }
    res.set_content(libreDetectAnswer(candidates), "application/json");
}

void ApiServer::Impl::libreLanguages(httplib::Response& res) const {
    const auto& d = model->description();
    std::vector<LibreLanguage> list;
    for (const auto& language : languageList()) {
        const auto code = language.code.toStdString();
        LibreLanguage entry{code, language.name.toStdString(), {}};
        if (d.targetLanguages.empty()) {
            if (code != d.fixedFrom) continue;
            entry.targets = {d.fixedTo};
        } else {
            // A multilingual model: the sources it reads (all, where it does not say), each with its other targets.
            if (!d.sourceLanguages.empty() &&
                std::find(d.sourceLanguages.begin(), d.sourceLanguages.end(), code) == d.sourceLanguages.end())
                continue;
            for (const auto& target : d.targetLanguages)
                if (target != code) entry.targets.push_back(target);
        }
        list.push_back(std::move(entry));
    }
    res.set_content(server::libreLanguages(list), "application/json");
}

ApiServer::ApiServer(ServerConfig config, std::shared_ptr<const Model> model,
                     std::map<std::string, std::shared_ptr<const LoraSet>> adapters)
    : impl_(std::make_unique<Impl>(std::move(config), std::move(model), std::move(adapters))) {
    // Enough connection threads for every request that may run or wait, and a few for quick routes; more
    // connections queue in the kernel's backlog.
    const auto threads = static_cast<std::size_t>(impl_->config.maxRunning + impl_->config.maxWaiting + 4);
    impl_->http.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
    // httplib sets SO_REUSEPORT, with which a second server bound a port already listened on and the kernel shared
    // the connections out between the two; SO_REUSEADDR alone still allows a restart over the last run's TIME_WAIT.
    impl_->http.set_socket_options([](int socket) {
        int yes = 1;
        ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    });
    impl_->routes();
}

ApiServer::~ApiServer() = default;

int ApiServer::bind() {
    const int port = impl_->config.port == 0 ? impl_->http.bind_to_any_port(impl_->config.host)
                                             : (impl_->http.bind_to_port(impl_->config.host, impl_->config.port) ? impl_->config.port : -1);
    if (port < 0)
        throw Error("io", fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", impl_->config.host,
                                      impl_->config.port));
    return port;
}

void ApiServer::run() {
    impl_->http.listen_after_bind();
}

void ApiServer::stop(bool now) {
    // httplib's stop() would cut the streams in flight: first turn new requests away and let those finish, for as
    // long as the grace period lasts; then they stop at their next decoding step and answer that they did.
    impl_->draining = true;
    const auto grace = std::chrono::duration<double>(now ? 0.0 : impl_->config.stopGraceSeconds);
    if (!impl_->gate.waitIdleFor(grace)) {
        logRequest("stopping: cancelling the requests still in flight");
        impl_->stopping.cancel();
        impl_->clients.cancelAll();
        impl_->gate.waitIdle();
    }
    std::call_once(impl_->stopped, [this] { impl_->http.stop(); });  // a second signal's stop(true) comes here too
}

}  // namespace dragoman::server
