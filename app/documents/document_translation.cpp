#include "documents/document_translation.h"

#include "dragoman.h"

#include <QDir>
#include <QFileInfo>

#include <map>

namespace dragoman::documents {
namespace {

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

}  // namespace

QString defaultOutputPath(const QString& input, const QString& targetLanguage) {
    const QFileInfo info(input);
    const auto* format = formatOf(input);
    const auto suffix = format ? format->outputSuffix(info.suffix()) : info.suffix();
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
    result.format = format->name();
    result.output = request.output.isEmpty() ? defaultOutputPath(request.input, QString::fromStdString(request.to)) : request.output;
    const QFileInfo out(result.output);
    if (out.exists() || out.absoluteFilePath() == in.absoluteFilePath())
        throw Error("io", result.output.toStdString() + " exists; Dragoman never overwrites a file (choose another --out)");
    if (!out.absoluteDir().exists()) throw Error("io", "no such folder: " + out.absolutePath().toStdString());

    const auto document = format->read(request.input, request.to);
    const auto segments = document->segments();
    SegmentTranslator translator(request);
    translator.add(segments);
    translator.run();
    document->write(result.output, translator.of(segments));
    result.segments = translator.count();
    result.keptSource = translator.keptSource();
    return result;
}

}  // namespace dragoman::documents
