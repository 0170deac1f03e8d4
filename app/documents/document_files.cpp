#include "documents/document_files.h"

#include "dragoman.h"

#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

namespace dragoman::documents {
namespace {

class RebuiltText : public ReadDocument {
public:
    RebuiltText(SegmentedDocument document, std::string prefix) : document_(std::move(document)), prefix_(std::move(prefix)) {}
    std::vector<std::string> segments() const override { return document_.segments; }
    std::vector<bool> taggedSegments() const override { return document_.tagged; }
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
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(bytes.data(), static_cast<qint64>(bytes.size())) != static_cast<qint64>(bytes.size()) || !file.commit())
        throw Error("io", "cannot write " + path.toStdString() + ": " + file.errorString().toStdString());
}

void writeBesideThenRename(const QString& output, const std::function<void(const QString& temporary)>& write) {
    // The temporary name is one no file has, so nothing of the user's is replaced, and no half-written
    // document is ever seen under the output's name.
    auto partial = output + ".partial";
    for (int n = 2; QFileInfo::exists(partial); ++n)
        partial = output + ".partial" + QString::number(n);
    try {
        write(partial);
    } catch (...) {
        QFile::remove(partial);  // ours: the name was free
        throw;
    }
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
