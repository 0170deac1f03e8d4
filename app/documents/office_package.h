#pragma once
// Office documents are ZIP packages of XML parts (Word, OpenDocument, PowerPoint). This reads a package's
// translatable parts as segmented documents and writes the translated copy: the package copied whole, those
// parts replaced, every other entry (styles, images, the OpenDocument mimetype first and uncompressed) byte for
// byte as it was.
#include "documents/document_format.h"
#include "documents/segmented_document.h"

#include <QString>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace dragoman::documents {

struct OfficeKind {
    std::string name;                                            // for messages: "Word document"
    std::vector<std::string> required;                           // entries every such package has
    std::function<bool(const std::string& entry)> translatable;  // the parts whose text is translated
    // Checks the package's own description of itself (an OpenDocument's mimetype entry): a message when it is
    // another kind of package; may be empty.
    std::function<std::string(const std::function<std::string(const std::string&)>& readEntry)> identify;
    // Takes a translatable part apart; throws Error("input") for a malformed one.
    std::function<SegmentedDocument(const std::string& xml, const std::string& entry)> segment;
};

// Throws Error("input") when `path` is not a readable package of that kind (not a ZIP, an entry missing, a part
// larger than any real document has, malformed XML).
std::unique_ptr<ReadDocument> readOfficePackage(const QString& path, const OfficeKind& kind);

}  // namespace dragoman::documents
