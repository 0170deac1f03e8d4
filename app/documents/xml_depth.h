#pragma once
// How deep a parsed XML document nests, checked before anything walks it: the code that reads paragraphs and inline
// markup descends one call per level, and a part nested tens of thousands of levels deep (a few kilobytes
// compressed) would run it out of stack. No real document nests near the limit.
#include <pugixml.hpp>

#include <cstddef>
#include <string>

namespace dragoman::documents {

constexpr std::size_t kMostXmlDepth = 1000;

// Throws Error("input") naming `what` when an element lies deeper than kMostXmlDepth.
void refuseDeepXml(const pugi::xml_document& document, const std::string& what);

}  // namespace dragoman::documents
