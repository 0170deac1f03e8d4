#pragma once
// The paragraphs of an office XML part (Word, OpenDocument, PowerPoint) as segments. A paragraph's text is cut
// into pieces at what splits it in the layout (tabs, line breaks, fields, hyperlink edges); each piece is one
// segment. Runs inside a piece whose formatting differs from the piece's main one (the formatting of most of its
// text) are inline markup: tagged spans (inline_markup.h), so a bold word stays bold where the translation puts
// it. Each span's words go into its first run, the rest into the main runs in their order; an answer that reorders
// the spans past what the runs allow goes whole into the run that held most of the piece. The whitespace around
// the piece stays. The formats differ only in what their elements mean.
#include "documents/segmented_document.h"

#include <pugixml.hpp>

#include <functional>
#include <string>

namespace dragoman::documents {

// What a node inside a paragraph is to its text.
enum class XmlRole {
    Text,      // holds text: a pcdata node, or an element whose text is its content (Word's w:t)
    Space,     // stands for spaces (OpenDocument's text:s): read as one, removed when the piece is written
    Descend,   // a wrapper (a run, a span): its children are read
    Link,      // a hyperlink: a piece of its own, then its children are read
    Boundary,  // splits the paragraph's text (a tab, a line break, a field)
    Skip,      // neither text nor a split (properties, a nested paragraph, a footnote read on its own)
};

struct XmlParagraphRules {
    std::string kind;        // for messages: "Word"
    std::string paragraphs;  // an XPath query for every paragraph: "//w:p"
    std::function<XmlRole(pugi::xml_node)> roleOf;
    // The formatting of a Text node, as a key: nodes with equal keys look alike (empty: the paragraph's own).
    std::function<std::string(pugi::xml_node)> formatOf;
    bool preserveSpace = false;  // Word: the node written gets xml:space="preserve"
};

// Throws Error("input") when `xml` is not well-formed.
SegmentedDocument segmentXmlParagraphs(const std::string& xml, const std::string& entry, const XmlParagraphRules& rules);

}  // namespace dragoman::documents
