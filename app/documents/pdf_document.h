#pragma once
// PDF text (Poppler): the text layer of each page, its hard-wrapped lines joined into paragraphs, translated
// into plain text (PDF layout is not rewritten); pages end with a form feed, as pdftotext writes them.
#include "documents/segmented_document.h"

#include <QString>

namespace dragoman::documents {

// Throws Error("input") for a file Poppler cannot open, a locked PDF, or one without any text (a scan).
SegmentedDocument segmentPdf(const QString& path);

}  // namespace dragoman::documents
