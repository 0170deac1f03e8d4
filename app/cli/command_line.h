#pragma once
// Shared plumbing for dragoman-cli subcommands: option parsing with QCommandLineParser, the exit-code
// contract of CLI.md (0 ok, 1 run-time failure with "error: ..." on stderr, 2 usage error), and output.
#include <QCommandLineParser>
#include <QStringList>

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace dragoman::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// A malformed command line: reported on stderr, exit code 2.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Parses one subcommand's arguments. `args` starts with the program name as seen by the user,
// e.g. "dragoman-cli inspect".
class CommandLine {
public:
    CommandLine(const QString& usageName, const QString& description);
    void addOption(const QCommandLineOption& option) { parser_.addOption(option); }
    // An option that may be given several times (--adapter of serve, --preference): any other given twice is a
    // usage error, not a silent "the last one wins" (--to de --to zh).
    void addRepeatableOption(const QCommandLineOption& option) {
        parser_.addOption(option);
        repeatable_ += option.names();
    }
    void addPositional(const QString& name, const QString& description, const QString& syntax = {});
    // Throws UsageError. Returns false when --help was printed and the command should exit 0.
    bool parse(const QStringList& args, int minPositional = 0, int maxPositional = 0);

    bool isSet(const QString& name) const { return parser_.isSet(name); }
    QString value(const QString& name) const { return parser_.value(name); }
    QStringList values(const QString& name) const { return parser_.values(name); }
    QStringList positional() const { return parser_.positionalArguments(); }
    // Integer option with a default and range check; throws UsageError naming the option.
    long long intValue(const QString& name, long long fallback, long long min, long long max) const;

private:
    QCommandLineParser parser_;
    QString usageName_;
    QStringList repeatable_;
};

// For commands with actions ("models list", "bench load"): the action's own argument list, whose first
// element names it as the user typed it ("dragoman-cli models list").
QStringList actionArgs(const QStringList& args);

struct Command {
    QString name;
    QString summary;
    std::function<int(const QStringList& args)> run;  // args[0] is "dragoman-cli <name>"
};

// Every subcommand, in the order `--help` lists them.
const std::vector<Command>& commands();

// Writes to stdout exactly (UTF-8, no translation of newlines). False once a write has failed (a full disk, a closed
// pipe): nothing more is written, and checkOutput() says why. Safe from any thread.
bool print(const std::string& text);
bool print(const QString& text);
// Throws Error("input") when stdin is a folder (`< /tmp`), which reads as no lines at all rather than failing.
void requireTextOnStdin();
// Throws Error("output") when a write to stdout failed: a command must not end with exit 0 and lost output.
void checkOutput();

int runCli(int argc, char** argv);

}  // namespace dragoman::cli
