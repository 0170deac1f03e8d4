#include "documents/pdf_document.h"

#include "documents/document_files.h"
#include "dragoman.h"

#include <QFile>
#include <QString>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace dragoman::documents {
namespace {

#ifndef DRAGOMAN_PDF_SHIM_BUILD_PATH
#define DRAGOMAN_PDF_SHIM_BUILD_PATH ""
#endif

// Poppler lives in libdragoman_pdf.so (documents/pdf_shim.cpp), opened at the first PDF where our libraries are
// looked for (paths::openOwnLibrary).
struct PdfLibrary {
    int (*text)(const char*, void (*)(const char*, void*), void*, char**, std::size_t*, char*, std::size_t) = nullptr;
    void (*free)(char*) = nullptr;
};

const PdfLibrary& pdfLibrary() {
    static PdfLibrary library;
    static std::string failure;
    static std::once_flag once;
    std::call_once(once, [] {
        std::string why;
        const auto symbols =
            paths::openOwnLibrary("libdragoman_pdf.so", DRAGOMAN_PDF_SHIM_BUILD_PATH, {"dragoman_pdf_text", "dragoman_pdf_free"}, why);
        if (symbols.empty()) {
            failure = "cannot load libdragoman_pdf.so (PDF support)" + why;
            return;
        }
        library.text = reinterpret_cast<decltype(library.text)>(symbols[0]);
        library.free = reinterpret_cast<decltype(library.free)>(symbols[1]);
    });
    if (!library.text) throw Error("internal", failure);
    return library;
}

// The text of every page poppler opens. Poppler's complaints about the file go to the log (the user gets one clear
// error).
std::vector<QString> pdfPages(const QString& path) {
    const auto& library = pdfLibrary();
    char* text = nullptr;
    std::size_t length = 0;
    char error[512] = {0};
    const auto log = [](const char* message, void*) { logMessage(LogLevel::Debug, std::string("poppler: ") + message); };
    const int status = library.text(QFile::encodeName(path).constData(), log, nullptr, &text, &length, error, sizeof error);
    if (status == 1) throw Error("input", path.toStdString() + " is not a readable PDF");
    if (status == 2) throw Error("input", path.toStdString() + " is password-protected");
    if (status != 0) throw Error("input", path.toStdString() + ": " + error);
    const std::unique_ptr<char, void (*)(char*)> owned(text, library.free);
    std::vector<QString> pages;
    for (std::size_t at = 0; at + 8 <= length;) {
        std::uint64_t size = 0;
        for (int i = 7; i >= 0; --i)
            size = size << 8 | static_cast<unsigned char>(text[at + static_cast<std::size_t>(i)]);
        at += 8;
        if (size > length - at) throw Error("internal", "libdragoman_pdf.so gave a page past the end of its text");
        pages.push_back(QString::fromUtf8(text + at, static_cast<qsizetype>(size)));
        at += static_cast<std::size_t>(size);
    }
    return pages;
}

SegmentedDocument segmentPdf(const QString& path) {
    const auto pages = pdfPages(path);
    SegmentWriter out;
    bool anyText = false;
    for (const auto& page : pages) {
        const auto lines = page.split('\n');
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
