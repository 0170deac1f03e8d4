#include "cli/command_line.h"

#include "dragoman.h"

#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace dragoman::cli {

CommandLine::CommandLine(const QString& usageName, const QString& description) : usageName_(usageName) {
    parser_.setApplicationDescription(description);
    parser_.addHelpOption();
    parser_.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
}

void CommandLine::addPositional(const QString& name, const QString& description, const QString& syntax) {
    parser_.addPositionalArgument(name, description, syntax);
}

bool CommandLine::parse(const QStringList& args, int minPositional, int maxPositional) {
    if (!parser_.parse(args)) throw UsageError(parser_.errorText().toStdString());
    const auto given = parser_.optionNames();  // as typed, once per use
    for (const auto& name : given)
        if (given.count(name) > 1 && !repeatable_.contains(name))
            throw UsageError("--" + name.toStdString() + " is given " + std::to_string(given.count(name)) + " times; give it once");
    if (parser_.isSet("help")) {
        QString help = parser_.helpText();
        // QCommandLineParser prints the binary name; show the subcommand the user typed.
        const auto firstLineEnd = help.indexOf(QStringLiteral(" [options]"));
        if (help.startsWith(QStringLiteral("Usage: ")) && firstLineEnd > 0) help.replace(7, firstLineEnd - 7, usageName_);
        print(help);
        return false;
    }
    const auto count = parser_.positionalArguments().size();
    if (count < minPositional) throw UsageError("missing argument; see " + usageName_.toStdString() + " --help");
    if (count > maxPositional)
        throw UsageError("unexpected argument '" + parser_.positionalArguments().value(maxPositional).toStdString() + "'");
    return true;
}

long long CommandLine::intValue(const QString& name, long long fallback, long long min, long long max) const {
    if (!parser_.isSet(name)) return fallback;
    bool ok = false;
    const long long value = parser_.value(name).toLongLong(&ok);
    if (!ok || value < min || value > max)
        throw UsageError("--" + name.toStdString() + " expects an integer in [" + std::to_string(min) + ", " + std::to_string(max) +
                         "], got '" + parser_.value(name).toStdString() + "'");
    return value;
}

QStringList actionArgs(const QStringList& args) {
    QStringList rest = args.mid(2);
    rest.prepend(args.value(0) + " " + args.value(1));
    return rest;
}

namespace {
std::atomic<int> outputFailure{0};  // the errno of the first failed write to stdout
}  // namespace

bool print(const std::string& text) {
    if (outputFailure.load() != 0) return false;
    errno = 0;
    const bool written = std::fwrite(text.data(), 1, text.size(), stdout) == text.size() && std::fflush(stdout) == 0;
    if (written) return true;
    int expected = 0;
    outputFailure.compare_exchange_strong(expected, errno != 0 ? errno : EIO);
    return false;
}

bool print(const QString& text) {
    return print(text.toStdString());
}

void requireTextOnStdin() {
    struct stat st {};
    if (::fstat(STDIN_FILENO, &st) == 0 && S_ISDIR(st.st_mode)) throw Error("input", "standard input is a folder, not text to read");
}

void checkOutput() {
    if (const int failure = outputFailure.load(); failure != 0)
        throw Error("output", std::string("cannot write to standard output: ") + std::strerror(failure));
}

}  // namespace dragoman::cli
