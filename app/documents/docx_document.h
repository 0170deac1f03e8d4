#pragma once
// Word documents (.docx): the paragraphs of the body, headers, footers, footnotes and endnotes. A paragraph's
// text between its tabs, line breaks, field marks and hyperlink edges is one segment; its translation is written
// into the run that held most of that text (whose formatting it takes), the other runs of the piece emptied.
// Every other part of the package is copied unchanged.
#include "documents/segmented_document.h"

#include <QString>

#include <map>

namespace dragoman::documents {

struct DocxParts {
    // Package entry name (word/document.xml, ...) -> its paragraphs as segments.
    std::map<std::string, SegmentedDocument> parts;
};

// Throws Error("input") when the file is not a readable Word package.
DocxParts readDocx(const QString& path);
// Writes `path`'s package to `out` (which must not exist) with the given parts replaced. Throws Error("io") on
// failure.
void writeDocx(const QString& path, const QString& out, const std::map<std::string, std::string>& replacedParts);

}  // namespace dragoman::documents
