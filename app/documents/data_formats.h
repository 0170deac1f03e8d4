#pragma once
// Data documents: JSON and YAML (application strings, locale files, configuration). Only values that are text
// (a letter in any script) are translated; keys, nesting, numbers, booleans, nulls, comments, anchors and the
// file's layout stay byte for byte, and each translated value is written back as a quoted string of the
// format. Whole-document translation with a structured prompt is checked against the source's shape
// (ReadDocument::translationsIn) before anything of it is used.
#include "documents/document_format.h"

#include <string>
#include <string_view>
#include <vector>

namespace dragoman::documents {

std::unique_ptr<DocumentFormat> jsonFormat();
std::unique_ptr<DocumentFormat> yamlFormat();

// The placeholders of a message, in order: {{var}}, ${var}, {name} or {0}, printf's %s, %d, %1$s, %.2f ("%%" is
// a literal percent sign, not one). A translation must keep the same ones.
std::vector<std::string> placeholdersIn(std::string_view text);
// Whether `translation` has the same placeholders as `source`, in any order.
bool keepsPlaceholders(std::string_view source, std::string_view translation);

}  // namespace dragoman::documents
