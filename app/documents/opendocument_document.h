#pragma once
// OpenDocument text (.odt, LibreOffice's own format) and presentations (.odp): the paragraphs and headings of the
// body (tables, lists, frames, footnotes and notes pages included) and of the page styles' headers and footers.
// A paragraph is cut at its tabs, line breaks, fields and links like a Word paragraph (xml_paragraphs.h); every
// other part of the package, the mimetype entry first among them, is copied unchanged.
#include "documents/document_format.h"

namespace dragoman::documents {

// read() throws Error("input") when the file is not a readable OpenDocument package of its suffix's kind.
std::unique_ptr<DocumentFormat> openDocumentTextFormat();
std::unique_ptr<DocumentFormat> openDocumentPresentationFormat();

}  // namespace dragoman::documents
