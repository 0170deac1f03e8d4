#include "documents/document_files.h"

#include "dragoman.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSaveFile>

#include <signal.h>
#include <unistd.h>
#include <cerrno>

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
    QSaveFile file(path);
    // flush() before commit(): Qt 6.4's commit() does not look at the result of its own final flush, so a disk
    // that fills up then would leave an empty file under the output's name. Uncommitted, nothing is left.
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(bytes.data(), static_cast<qint64>(bytes.size())) != static_cast<qint64>(bytes.size()) || !file.flush() || !file.commit())
        throw Error("io", "cannot write " + path.toStdString() + ": " + file.errorString().toStdString());
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
    try {
        write(partial);
    } catch (...) {
        QFile::remove(partial);  // ours: the name was free
        throw;
    }
    // On disk before it takes the name: after a crash of the machine the output is whole or absent.
    if (QFile written(partial); written.open(QIODevice::ReadOnly)) ::fsync(written.handle());
    if (!QFile::rename(partial, output)) {
        QFile::remove(partial);
        throw Error("io", "cannot write " + output.toStdString());
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
