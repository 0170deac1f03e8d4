#include "documents/pdf_document.h"

#include "documents/document_files.h"
#include "dragoman.h"

#include <QFile>
#include <QString>

#include <poppler-document.h>
#include <poppler-global.h>
#include <poppler-page.h>

#include <algorithm>
#include <memory>

namespace dragoman::documents {
namespace {

SegmentedDocument segmentPdf(const QString& path) {
    // Poppler reports parse problems on stderr; they belong in the log (the user gets one clear error).
    static const bool quiet = [] {
        poppler::set_debug_error_function([](const std::string& message, void*) { logMessage(LogLevel::Debug, "poppler: " + message); },
                                          nullptr);
        return true;
    }();
    (void)quiet;
    std::unique_ptr<poppler::document> doc(poppler::document::load_from_file(QFile::encodeName(path).toStdString()));
    if (!doc) throw Error("input", path.toStdString() + " is not a readable PDF");
    if (doc->is_locked()) throw Error("input", path.toStdString() + " is password-protected");
    SegmentWriter out;
    bool anyText = false;
    for (int p = 0; p < doc->pages(); ++p) {
        std::unique_ptr<poppler::page> page(doc->create_page(p));
        if (!page) continue;
        const auto bytes = page->text().to_utf8();
        const auto lines = QString::fromUtf8(bytes.data(), static_cast<qsizetype>(bytes.size())).split('\n');
        // Lines of one paragraph are joined (a hyphen at a line end joins without a space); blank lines part them.
        QString paragraph;
        auto flush = [&] {
            if (!paragraph.isEmpty()) {
                out.segment(paragraph.toStdString());
                out.literal("\n\n");
                anyText = true;
            }
            paragraph.clear();
        };
        // Poppler does not always leave a blank line between paragraphs: a line that ends a sentence well short
        // of the page's full line length ends its paragraph too.
        qsizetype fullLine = 0;
        for (const auto& raw : lines)
            fullLine = std::max(fullLine, raw.trimmed().size());
        static const QString enders = QStringLiteral(".!?:。！？：");
        for (const auto& raw : lines) {
            const auto line = raw.trimmed();
            if (line.isEmpty()) {
                flush();
                continue;
            }
            if (paragraph.endsWith('-'))
                paragraph.chop(1);
            else if (!paragraph.isEmpty())
                paragraph += ' ';
            paragraph += line;
            if (enders.contains(line.back()) && line.size() < fullLine * 4 / 5) flush();
        }
        flush();
        out.literal("\f");
    }
    if (!anyText) throw Error("input", path.toStdString() + " has no text layer (a scanned PDF needs OCR first)");
    return out.finish();
}

class PdfFormat : public DocumentFormat {
public:
    QString name() const override { return QStringLiteral("PDF text"); }
    QStringList suffixes() const override { return {QStringLiteral("pdf")}; }
    QString outputSuffix(const QString&) const override { return QStringLiteral("txt"); }
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions&) const override { return rebuiltAsText(segmentPdf(path)); }
};

}  // namespace

std::unique_ptr<DocumentFormat> pdfFormat() {
    return std::make_unique<PdfFormat>();
}

}  // namespace dragoman::documents
