#include "documents/document_translation.h"

#include "documents/docx_document.h"
#include "documents/pdf_document.h"
#include "documents/text_formats.h"
#include "dragoman.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSaveFile>

#include <map>

namespace dragoman::documents {
namespace {

const std::map<QString, Format>& suffixes() {
    static const std::map<QString, Format> table{{"txt", Format::PlainText},     {"text", Format::PlainText}, {"md", Format::Markdown},
                                                 {"markdown", Format::Markdown}, {"html", Format::Html},      {"htm", Format::Html},
                                                 {"xhtml", Format::Html},        {"srt", Format::Subtitles},  {"vtt", Format::Subtitles},
                                                 {"docx", Format::Docx},         {"pdf", Format::Pdf}};
    return table;
}

std::string readText(const QString& path) {
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

// Translates each distinct segment once (headers, repeated cells), in order, reporting progress.
class SegmentTranslator {
public:
    explicit SegmentTranslator(const DocumentRequest& request) : request_(request) {}

    void add(const std::vector<std::string>& segments) {
        for (const auto& s : segments)
            if (done_.emplace(s, std::string()).second) order_.push_back(s);
    }
    void run() {
        for (std::size_t i = 0; i < order_.size(); ++i) {
            if (request_.progress) request_.progress(i, order_.size());
            auto translation = request_.translate(order_[i]);
            // A segment is one line of its document; a model that writes line breaks (HY-MT can) must not add
            // lines, which would end a subtitle cue or a Markdown block early.
            if (order_[i].find('\n') == std::string::npos)
                for (auto& c : translation)
                    if (c == '\n' || c == '\r') c = ' ';
            // A model can answer a lone word or a fragment with nothing (the small bundled one does, for "very"
            // between HTML tags): the source text stays rather than vanish from the document.
            if (translation.find_first_not_of(" \t\r\n") == std::string::npos) {
                translation = order_[i];
                ++keptSource_;
            }
            done_[order_[i]] = std::move(translation);
        }
        if (request_.progress) request_.progress(order_.size(), order_.size());
    }
    std::vector<std::string> of(const std::vector<std::string>& segments) const {
        std::vector<std::string> out;
        for (const auto& s : segments)
            out.push_back(done_.at(s));
        return out;
    }
    std::size_t count() const { return order_.size(); }
    std::size_t keptSource() const { return keptSource_; }

private:
    const DocumentRequest& request_;
    std::map<std::string, std::string> done_;
    std::vector<std::string> order_;
    std::size_t keptSource_ = 0;
};

void writeAtomically(const QString& path, const std::string& bytes) {
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) ||
        file.write(bytes.data(), static_cast<qint64>(bytes.size())) != static_cast<qint64>(bytes.size()) || !file.commit())
        throw Error("io", "cannot write " + path.toStdString() + ": " + file.errorString().toStdString());
}

}  // namespace

std::optional<Format> formatOf(const QString& path) {
    const auto it = suffixes().find(QFileInfo(path).suffix().toLower());
    if (it == suffixes().end()) return std::nullopt;
    return it->second;
}

QString supportedPatterns() {
    QStringList patterns;
    for (const auto& [suffix, format] : suffixes())
        patterns << "*." + suffix;
    return patterns.join(' ');
}

QString defaultOutputPath(const QString& input, const QString& targetLanguage) {
    const QFileInfo info(input);
    const auto suffix = formatOf(input) == Format::Pdf ? QStringLiteral("txt") : info.suffix();
    const auto stem = info.dir().filePath(info.completeBaseName() + "." + targetLanguage);
    auto candidate = stem + "." + suffix;
    for (int n = 2; QFileInfo::exists(candidate); ++n)
        candidate = QStringLiteral("%1 (%2).%3").arg(stem).arg(n).arg(suffix);
    return candidate;
}

DocumentResult translateDocument(const DocumentRequest& request) {
    const QFileInfo in(request.input);
    if (!in.exists()) throw Error("input", "no such file: " + request.input.toStdString());
    if (!in.isFile()) throw Error("input", request.input.toStdString() + " is not a file");
    const auto format = formatOf(request.input);
    if (!format)
        throw Error("input", request.input.toStdString() + ": unsupported document type '." + in.suffix().toStdString() +
                                 "' (supported: " + supportedPatterns().toStdString() + ")");
    if (in.size() > kMaxDocumentBytes)
        throw Error("input", request.input.toStdString() + " is " + std::to_string(in.size() >> 20) + " MiB; documents up to " +
                                 std::to_string(kMaxDocumentBytes >> 20) + " MiB are translated");
    DocumentResult result;
    result.format = *format;
    result.output = request.output.isEmpty() ? defaultOutputPath(request.input, QString::fromStdString(request.to)) : request.output;
    const QFileInfo out(result.output);
    if (out.exists() || out.absoluteFilePath() == in.absoluteFilePath())
        throw Error("io", result.output.toStdString() + " exists; Dragoman never overwrites a file (choose another --out)");
    if (!out.absoluteDir().exists()) throw Error("io", "no such folder: " + out.absolutePath().toStdString());

    SegmentTranslator translator(request);
    if (*format == Format::Docx) {
        auto docx = readDocx(request.input);
        for (const auto& [name, part] : docx.parts)
            translator.add(part.segments);
        translator.run();
        std::map<std::string, std::string> replaced;
        for (const auto& [name, part] : docx.parts)
            if (!part.segments.empty()) replaced.emplace(name, part.rebuild(translator.of(part.segments)));
        // Written beside the output under a temporary name, then renamed: no half-written document is ever seen.
        // The temporary name is one no file has, so nothing of the user's is replaced.
        auto partial = result.output + ".partial";
        for (int n = 2; QFileInfo::exists(partial); ++n)
            partial = result.output + ".partial" + QString::number(n);
        try {
            writeDocx(request.input, partial, replaced);
        } catch (...) {
            QFile::remove(partial);  // ours: the name was free
            throw;
        }
        if (!QFile::rename(partial, result.output)) {
            QFile::remove(partial);
            throw Error("io", "cannot write " + result.output.toStdString());
        }
        result.segments = translator.count();
        result.keptSource = translator.keptSource();
        return result;
    }

    SegmentedDocument doc;
    std::string bom;
    if (*format == Format::Pdf) {
        doc = segmentPdf(request.input);
    } else {
        auto text = readText(request.input);
        if (text.starts_with("\xEF\xBB\xBF")) {
            bom = text.substr(0, 3);
            text.erase(0, 3);
        }
        switch (*format) {
            case Format::Markdown:
                doc = segmentMarkdown(text);
                break;
            case Format::Html:
                doc = segmentHtml(text, request.to);
                break;
            case Format::Subtitles:
                doc = segmentSubtitles(text);
                break;
            default:
                doc = segmentPlainText(text);
                break;
        }
    }
    translator.add(doc.segments);
    translator.run();
    writeAtomically(result.output, bom + doc.rebuild(translator.of(doc.segments)));
    result.segments = translator.count();
    result.keptSource = translator.keptSource();
    return result;
}

}  // namespace dragoman::documents
