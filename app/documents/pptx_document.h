#pragma once
// PowerPoint presentations (.pptx): the paragraphs of every slide (text boxes, placeholders, tables, grouped
// shapes) and of the speaker notes. A paragraph is cut at line breaks, fields (slide numbers, dates) and
// hyperlinked runs like a Word paragraph (xml_paragraphs.h). Layouts and masters, whose texts are editing
// prompts a slide show never displays, and every other part are copied unchanged.
#include "documents/document_format.h"

namespace dragoman::documents {

// read() throws Error("input") when the file is not a readable PowerPoint package.
std::unique_ptr<DocumentFormat> pptxFormat();

}  // namespace dragoman::documents
