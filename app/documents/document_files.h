#pragma once
// The file handling every format shares: reading UTF-8 text, and writing a translated copy so that it appears
// whole or not at all.
#include "documents/document_format.h"
#include "documents/segmented_document.h"

#include <QString>

#include <functional>
#include <string>
#include <string_view>

namespace dragoman::documents {

// The whole file; Error("input") when it cannot be read or is not UTF-8 text.
std::string readUtf8File(const QString& path);
// readUtf8File() split into its byte-order mark (or "") and the text after it, for formats that write it back.
std::pair<std::string, std::string> readUtf8FileWithoutBom(const QString& path);
// Through writeBesideThenRename(): the file appears whole or not at all. Error("io") on failure.
void writeAtomically(const QString& path, const std::string& bytes);
// `write` fills a temporary file beside `output` (a name no file has), which then takes the name `output`; on
// failure nothing is left behind. A file that took the name meanwhile is never replaced: the translation goes
// under "<name> (2).<suffix>" (the next free one) and Error("io") says where.
void writeBesideThenRename(const QString& output, const std::function<void(const QString& temporary)>& write);
// A document whose translated copy is its SegmentedDocument rebuilt as text, after `prefix` (a byte-order mark).
std::unique_ptr<ReadDocument> rebuiltAsText(SegmentedDocument document, std::string prefix = {});

// A text format (text_formats.h): the file read whole as UTF-8 (a byte-order mark is kept), taken apart by
// `segment`, written back as text.
using TextSegmenter = std::function<SegmentedDocument(std::string_view text, const std::string& targetLanguage)>;
std::unique_ptr<DocumentFormat> textFormat(QString name, QStringList suffixes, TextSegmenter segment);

}  // namespace dragoman::documents
