#pragma once
// PDF text (Poppler): the text layer of each page, its hard-wrapped lines joined into paragraphs, translated
// into plain text (PDF layout is not rewritten); pages end with a form feed, as pdftotext writes them.
#include "documents/document_format.h"

namespace dragoman::documents {

// read() throws Error("input") for a file Poppler cannot open, a locked PDF, or one without any text (a scan).
std::unique_ptr<DocumentFormat> pdfFormat();

}  // namespace dragoman::documents
