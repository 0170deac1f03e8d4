#include "cli/command_line.h"
#include "dragoman.h"

#include <QCoreApplication>
#include <QStringDecoder>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

namespace dragoman::cli {
namespace {

void printError(const std::string& message) {
    // One line: the contract promises a single "error: " line on stderr.
    std::string line = message;
    for (char& c : line)
        if (c == '\n' || c == '\r') c = ' ';
    std::fprintf(stderr, "error: %s\n", line.c_str());
}

QString topLevelHelp() {
    QString text = QStringLiteral(
        "Usage: dragoman-cli <command> [options]\n\n"
        "Dragoman: offline translation from the command line.\n\nCommands:\n");
    for (const auto& command : commands())
        text += QStringLiteral("  %1  %2\n").arg(command.name, -16).arg(command.summary);
    text += QStringLiteral(
        "\nOptions:\n  -h, --help     Show this help\n  -v, --version  Show the version\n\n"
        "Run 'dragoman-cli <command> --help' for the options of a command.\n");
    return text;
}

int dispatch(const QStringList& args) {
    if (args.size() < 2) {
        std::fputs(topLevelHelp().toUtf8().constData(), stderr);
        return kExitUsage;
    }
    const QString first = args.at(1);
    if (first == "-h" || first == "--help" || first == "help") {
        print(topLevelHelp());
        return kExitOk;
    }
    if (first == "-v" || first == "--version") {
        print(QStringLiteral("dragoman-cli %1\n").arg(QCoreApplication::applicationVersion()));
        return kExitOk;
    }
    if (first.startsWith('-')) throw UsageError("unknown option '" + first.toStdString() + "'");
    for (const auto& command : commands()) {
        if (command.name != first) continue;
        QStringList rest = args.mid(2);
        rest.prepend(QStringLiteral("dragoman-cli ") + first);
        return command.run(rest);
    }
    throw UsageError("unknown command '" + first.toStdString() + "'; see dragoman-cli --help");
}

}  // namespace

int runCli(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("dragoman"));
    QCoreApplication::setApplicationVersion(QStringLiteral(DRAGOMAN_VERSION));
    initLogging();
    // A reader that goes away (`| head -1`) makes the next write fail with EPIPE, reported like any failed write,
    // instead of killing the process with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    removePartialFilesWhenInterrupted();  // Ctrl-C leaves no half-written checkpoint or document behind
    // Qt's own warnings (a network reply read after it closed, say) go to the log file: the contract's stderr is one
    // "error: " line when a command fails, and nothing else.
    qInstallMessageHandler([](QtMsgType type, const QMessageLogContext&, const QString& message) {
        logMessage(type == QtCriticalMsg || type == QtFatalMsg ? LogLevel::Warning : LogLevel::Debug, "Qt: " + message.toStdString());
    });
    try {
        // Arguments are read as UTF-8: other bytes (a --text in another encoding) would reach the model as U+FFFD,
        // where the same bytes on stdin are refused.
        for (int i = 1; i < argc; ++i) {
            QStringDecoder utf8(QStringConverter::Utf8);
            [[maybe_unused]] const QString decoded = utf8(QByteArrayView(argv[i]));
            if (utf8.hasError()) throw Error("input", "argument " + std::to_string(i) + " is not valid UTF-8");
        }
        const int status = dispatch(QCoreApplication::arguments());
        checkOutput();
        return status;
    } catch (const UsageError& e) {
        printError(e.what());
        return kExitUsage;
    } catch (const Error& e) {
        printError(e.what());
        return kExitFailure;
    } catch (const std::exception& e) {
        // libtorch and the standard library report in their own words; still one line, still exit 1.
        std::string what = e.what();
        printError(what.substr(0, what.find('\n')));
        return kExitFailure;
    }
}

}  // namespace dragoman::cli

// Everything the command wrote is flushed and its files are closed when runCli returns (its objects live in
// its scope). What static destructors would still do is tear down libtorch's operator registry and thread
// pools, ~0.15 s of a short command's time (a pipe or a batch loop pays it per call), so the process ends here.
int main(int argc, char** argv) {
    const int status = dragoman::cli::runCli(argc, argv);
    dragoman::flushLog();
    std::fflush(nullptr);
    std::_Exit(status);
}
