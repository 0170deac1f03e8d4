#pragma once
// Word documents (.docx): the paragraphs of the body, headers, footers, footnotes and endnotes. A paragraph's
// text between its tabs, line breaks, field marks and hyperlink edges is one segment, its runs of other
// formatting tagged spans (xml_paragraphs.h). Every other part of the package is copied unchanged.
#include "documents/document_format.h"

namespace dragoman::documents {

// read() throws Error("input") when the file is not a readable Word package.
std::unique_ptr<DocumentFormat> docxFormat();

}  // namespace dragoman::documents
