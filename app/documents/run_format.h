#pragma once
// Run formatting as a comparable key, for xml_paragraphs.h: two runs with equal keys look the same. Properties
// that do not change how text looks (language tags, proofing and revision marks) are left out, so the runs a word
// processor splits for its own bookkeeping read as one.
#include <pugixml.hpp>

#include <string>

namespace dragoman::documents {

// The element's attributes and children, less those named in `ignored` (qualified names, or name=value for one
// value of an attribute; space separated).
std::string formattingKey(pugi::xml_node properties, const std::string& ignored);

}  // namespace dragoman::documents
