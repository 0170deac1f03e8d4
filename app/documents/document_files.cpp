#include "documents/document_files.h"

#include "dragoman.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QScopeGuard>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace dragoman::documents {
namespace {

class RebuiltText : public ReadDocument {
public:
    RebuiltText(SegmentedDocument document, std::string prefix) : document_(std::move(document)), prefix_(std::move(prefix)) {}
    std::vector<std::string> segments() const override { return document_.segments; }
    std::vector<bool> taggedSegments() const override { return document_.tagged; }
    std::vector<std::string> keptAsIs() const override { return document_.keptAsIs; }
    void write(const QString& output, const std::vector<std::string>& translations) const override {
        writeAtomically(output, prefix_ + document_.rebuild(translations));
    }

private:
    SegmentedDocument document_;
    std::string prefix_;
};

class TextFormat : public DocumentFormat {
public:
    TextFormat(QString name, QStringList suffixes, TextSegmenter segment)
        : name_(std::move(name)), suffixes_(std::move(suffixes)), segment_(std::move(segment)) {}
    QString name() const override { return name_; }
    QStringList suffixes() const override { return suffixes_; }
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions& options) const override {
        const auto [bom, text] = readUtf8FileWithoutBom(path);
        return rebuiltAsText(segment_(text, options.targetLanguage), bom);
    }

private:
    QString name_;
    QStringList suffixes_;
    TextSegmenter segment_;
};

}  // namespace

std::string readUtf8File(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        throw Error("input", "cannot read " + path.toStdString() + ": " + file.errorString().toStdString());
    const auto bytes = file.readAll();
    std::string text(bytes.constData(), static_cast<std::size_t>(bytes.size()));
    if (text.find('\0') != std::string::npos || !isValidUtf8(text))
        throw Error("input",
                    path.toStdString() + " is not UTF-8 text (save it as UTF-8, or check that it is the kind of file its name says)");
    return text;
}

std::pair<std::string, std::string> readUtf8FileWithoutBom(const QString& path) {
    auto text = readUtf8File(path);
    std::string bom;
    if (text.starts_with("\xEF\xBB\xBF")) {
        bom = text.substr(0, 3);
        text.erase(0, 3);
    }
    return {bom, text};
}

void writeAtomically(const QString& path, const std::string& bytes) {
    writeBesideThenRename(path, [&](const QString& temporary) {
        // Every write is checked (writeBesideThenRename() syncs and checks the rest): a file that says it was written
        // holds all of it.
        const auto fail = [&] { throw Error("io", "cannot write " + path.toStdString() + ": " + std::strerror(errno)); };
        const int fd = ::open(QFile::encodeName(temporary).constData(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0) fail();
        const auto closing = qScopeGuard([fd] { ::close(fd); });
        for (std::size_t at = 0; at < bytes.size();) {
            const auto wrote = ::write(fd, bytes.data() + at, bytes.size() - at);
            if (wrote < 0 && errno == EINTR) continue;
            if (wrote <= 0) {
                if (wrote == 0) errno = EIO;
                fail();
            }
            at += static_cast<std::size_t>(wrote);
        }
    });
}

namespace {

// ".<name>.dragoman-partial-<pid>", and what a library writing it makes beside it (libzip: "<that>.XXXXXX").
const QRegularExpression& partialPattern() {
    static const QRegularExpression pattern(QStringLiteral("^\\..+\\.dragoman-partial-(\\d+)(\\.[A-Za-z0-9]+)?$"));
    return pattern;
}

// Partial files that a killed job left in `folder`: only names of our own pattern, only when the process that
// wrote them is gone.
void removeStalePartials(const QString& folder) {
    const auto names = QDir(folder).entryList({QStringLiteral(".*.dragoman-partial-*")}, QDir::Files | QDir::Hidden | QDir::System);
    for (const auto& name : names) {
        const auto match = partialPattern().match(name);
        if (!match.hasMatch()) continue;
        const auto pid = match.captured(1).toLongLong();
        if (pid > 0 && pid != ::getpid() && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
            QFile::remove(QDir(folder).filePath(name));
    }
}

// Gives `partial` the name `output` only where no file has it: false (nothing changed) where one has. The check and
// the rename are one step, so a file that appears meanwhile is never replaced.
bool takeNameIfFree(const QString& partial, const QString& output) {
    const auto from = QFile::encodeName(partial), to = QFile::encodeName(output);
    if (::renameat2(AT_FDCWD, from.constData(), AT_FDCWD, to.constData(), RENAME_NOREPLACE) == 0) return true;
    if (errno == EINVAL || errno == ENOSYS || errno == EOPNOTSUPP) {  // a file system without it: a link is made only to a free name
        if (::link(from.constData(), to.constData()) == 0) {
            ::unlink(from.constData());
            return true;
        }
    }
    if (errno == EEXIST) return false;
    throw Error("io", "cannot write " + output.toStdString() + ": " + std::strerror(errno));
}

}  // namespace

void writeBesideThenRename(const QString& output, const std::function<void(const QString& temporary)>& write) {
    // The temporary name is hidden, ours alone and stamped with this process, so nothing of the user's is
    // replaced, no half-written document is ever seen under the output's name, and what a killed job left
    // is recognised and removed by the next one.
    const QFileInfo info(output);
    removeStalePartials(info.absolutePath());
    const auto stem = info.absolutePath() + "/." + info.fileName() + ".dragoman-partial-" + QString::number(::getpid());
    auto partial = stem;
    for (int n = 2; QFileInfo::exists(partial); ++n)
        partial = stem + "." + QString::number(n);
    const PartialFile registered(partial.toStdString());  // removed if the process is interrupted meanwhile
    try {
        write(partial);
    } catch (...) {
        QFile::remove(partial);  // ours: the name was free
        throw;
    }
    try {
        // On disk before it takes the name: after a crash of the machine the output is whole or absent. A full disk
        // may refuse only now, with blocks it had promised.
        if (QFile written(partial); !written.open(QIODevice::ReadOnly) || ::fsync(written.handle()) != 0)
            throw Error("io", "cannot write " + output.toStdString() + ": " + std::strerror(errno));
        if (takeNameIfFree(partial, output)) return;
        // A file took the name while the document was translated (the name was free when the job started): it stays
        // as it is, and the translation goes under the next free numbered name rather than being lost.
        const QFileInfo wanted(output);
        const auto suffix = wanted.suffix().isEmpty() ? QString() : "." + wanted.suffix();
        for (int n = 2; n < 1000; ++n) {
            const auto other = QStringLiteral("%1/%2 (%3)%4").arg(wanted.absolutePath(), wanted.completeBaseName()).arg(n).arg(suffix);
            if (takeNameIfFree(partial, other))
                throw Error("io", output.toStdString() +
                                      " appeared while the document was translated and was left as it was; the translation is in " +
                                      other.toStdString());
        }
        throw Error("io", "cannot write " + output.toStdString() + ": it exists, and so do its numbered alternatives");
    } catch (...) {
        QFile::remove(partial);  // still ours where no name was taken
        throw;
    }
}

std::unique_ptr<ReadDocument> rebuiltAsText(SegmentedDocument document, std::string prefix) {
    return std::make_unique<RebuiltText>(std::move(document), std::move(prefix));
}

}  // namespace dragoman::documents

namespace dragoman::documents {

std::unique_ptr<DocumentFormat> textFormat(QString name, QStringList suffixes, TextSegmenter segment) {
    return std::make_unique<TextFormat>(std::move(name), std::move(suffixes), std::move(segment));
}

}  // namespace dragoman::documents
