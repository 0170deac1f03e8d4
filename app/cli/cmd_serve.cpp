#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_option.h"
#include "dragoman.h"
#include "server/api_server.h"

#include <QFile>

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>

namespace dragoman::cli {
namespace {

int stopPipe[2] = {-1, -1};  // written by the signal handler: the one thing it may safely do

std::string readApiKey(const QString& path) {
    requireRegularFile(path.toStdString());
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw Error("io", "cannot read the API key file " + path.toStdString() + ": " + file.errorString().toStdString());
    const auto key = QString::fromUtf8(file.read(4096)).trimmed().toStdString();
    if (key.empty()) throw Error("input", "the API key file " + path.toStdString() + " is empty");
    return key;
}

}  // namespace

// serve [--model M] [--adapter NAME=A ...] [--host H] [--port P] [--api-key-file F] [--max-batch N]
int runServe(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli serve"),
                    QStringLiteral("Serve the model over HTTP: OpenAI's /v1/chat/completions and /v1/models, LibreTranslate's "
                                   "/translate and /languages."));
    cmd.addOption(modelOption());
    cmd.addRepeatableOption(
        {QStringLiteral("adapter"), QStringLiteral("A LoRA adapter requests name as their model (repeatable)"), QStringLiteral("NAME=A")});
    cmd.addOption({QStringLiteral("host"), QStringLiteral("Address to listen on (default 127.0.0.1)"), QStringLiteral("H"),
                   QStringLiteral("127.0.0.1")});
    cmd.addOption(
        {QStringLiteral("port"), QStringLiteral("Port (default 8080; 0: a free one)"), QStringLiteral("P"), QStringLiteral("8080")});
    cmd.addOption({QStringLiteral("api-key-file"), QStringLiteral("Ask clients for the key in this file"), QStringLiteral("F")});
    cmd.addOption({QStringLiteral("max-batch"), QStringLiteral("Requests computed at once (default 4)"), QStringLiteral("N")});
    cmd.addOption(
        {QStringLiteral("max-queue"), QStringLiteral("Requests that may wait beyond those (default 4 x max-batch)"), QStringLiteral("N")});
    cmd.addOption({QStringLiteral("stop-grace"),
                   QStringLiteral("Seconds requests in flight may go on after SIGTERM or SIGINT before they are cancelled (default 30; "
                                  "a second signal cancels them at once)"),
                   QStringLiteral("S")});
    if (!cmd.parse(args)) return kExitOk;

    server::ServerConfig config;
    config.host = cmd.value("host").toStdString();
    config.port = static_cast<int>(cmd.intValue("port", 8080, 0, 65535));
    config.maxRunning = static_cast<int>(cmd.intValue("max-batch", 4, 1, 256));
    config.maxWaiting = static_cast<int>(cmd.intValue("max-queue", 4 * config.maxRunning, 0, 4096));
    if (cmd.isSet("api-key-file")) config.apiKey = readApiKey(cmd.value("api-key-file"));
    config.stopGraceSeconds = static_cast<double>(cmd.intValue("stop-grace", 30, 0, 86400));

    const auto model = loadModelOption(cmd);
    std::map<std::string, std::shared_ptr<const LoraSet>> adapters;
    for (const auto& spec : cmd.values("adapter")) {
        const auto equals = spec.indexOf('=');
        if (equals <= 0 || equals == spec.size() - 1) throw UsageError("--adapter takes NAME=ADAPTER, got '" + spec.toStdString() + "'");
        const auto name = spec.left(equals).toStdString();
        if (name == model->description().id || adapters.count(name)) throw UsageError("--adapter: the name '" + name + "' is taken");
        adapters.emplace(name, model->loadAdapter(spec.mid(equals + 1).toStdString()));
    }

    server::ApiServer server(config, model, std::move(adapters));
    const int port = server.bind();
    // An IPv6 address goes in brackets, or the URL would not parse ("http://::1:8080").
    const bool ipv6 = config.host.find(':') != std::string::npos;
    std::printf("listening on http://%s%s%s:%d\n", ipv6 ? "[" : "", config.host.c_str(), ipv6 ? "]" : "", port);
    std::fflush(stdout);
    // SIGTERM and SIGINT (whichever thread takes them) write their number to a pipe; one thread reads it and
    // stops the server, which first lets the requests in flight finish.
    if (::pipe2(stopPipe, O_CLOEXEC) != 0) throw Error("io", "cannot create the stop pipe");
    struct sigaction action {};
    action.sa_handler = [](int signal) {
        const auto byte = static_cast<char>(signal);
        [[maybe_unused]] const auto written = ::write(stopPipe[1], &byte, 1);
    };
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGTERM, &action, nullptr);
    ::sigaction(SIGINT, &action, nullptr);
    std::atomic<bool> ran{false};
    std::thread stopper([&] {
        char signal = 0;
        if (::read(stopPipe[0], &signal, 1) != 1 || signal == 0) return;  // 0: run() ended by itself
        std::fprintf(stderr, "%s: finishing the requests in flight (for %d s at most), then stopping\n",
                     signal == SIGTERM ? "SIGTERM" : "SIGINT", static_cast<int>(config.stopGraceSeconds));
        std::thread graceful([&] {
            server.stop();
            // Every request has ended (or was cancelled) and the server listens no more; what can still hold run() is a
            // connection whose client is sending its request's headers a byte at a time, which the HTTP library reads
            // to the end. Such a request never started: the process does not wait for it.
            for (int waited = 0; waited < 40 && !ran.load(); ++waited)
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            if (!ran.load()) {
                logMessage(LogLevel::Warning, "stopped with connections still sending their requests: closed unanswered");
                flushLog();
                std::fflush(nullptr);
                std::_Exit(kExitOk);
            }
        });
        // A second signal cancels what is still running.
        if (::read(stopPipe[0], &signal, 1) == 1 && signal != 0) {
            std::fprintf(stderr, "%s again: cancelling the requests in flight\n", signal == SIGTERM ? "SIGTERM" : "SIGINT");
            server.stop(true);
        }
        graceful.join();
    });
    server.run();
    ran = true;
    const char done = 0;
    [[maybe_unused]] const auto written = ::write(stopPipe[1], &done, 1);
    stopper.join();
    return kExitOk;
}

}  // namespace dragoman::cli
