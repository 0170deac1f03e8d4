// The formats translate-file reads: one line each.
#include "documents/data_formats.h"
#include "documents/document_files.h"
#include "documents/document_format.h"
#include "documents/docx_document.h"
#include "documents/opendocument_document.h"
#include "documents/pdf_document.h"
#include "documents/po_document.h"
#include "documents/pptx_document.h"
#include "documents/text_formats.h"
#include "documents/xliff_document.h"

#include <QFileInfo>

namespace dragoman::documents {

const std::vector<std::unique_ptr<DocumentFormat>>& documentFormats() {
    static const auto formats = [] {
        std::vector<std::unique_ptr<DocumentFormat>> all;
        all.push_back(
            textFormat("Plain text", {"txt", "text"}, [](std::string_view text, const std::string&) { return segmentPlainText(text); }));
        all.push_back(
            textFormat("Markdown", {"md", "markdown"}, [](std::string_view text, const std::string&) { return segmentMarkdown(text); }));
        all.push_back(textFormat("HTML", {"html", "htm", "xhtml"}, segmentHtml));
        all.push_back(
            textFormat("Subtitles", {"srt", "vtt"}, [](std::string_view text, const std::string&) { return segmentSubtitles(text); }));
        all.push_back(docxFormat());
        all.push_back(openDocumentTextFormat());
        all.push_back(openDocumentPresentationFormat());
        all.push_back(pptxFormat());
        all.push_back(jsonFormat());
        all.push_back(yamlFormat());
        all.push_back(poFormat());
        all.push_back(xliffFormat());
        all.push_back(pdfFormat());
        return all;
    }();
    return formats;
}

const DocumentFormat* formatOf(const QString& path) {
    const auto suffix = QFileInfo(path).suffix().toLower();
    for (const auto& format : documentFormats())
        if (format->suffixes().contains(suffix)) return format.get();
    return nullptr;
}

QString supportedPatterns() {
    QStringList patterns;
    for (const auto& format : documentFormats())
        for (const auto& suffix : format->suffixes())
            patterns << "*." + suffix;
    return patterns.join(' ');
}

}  // namespace dragoman::documents
