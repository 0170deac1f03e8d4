#include "documents/docx_document.h"

#include "documents/office_package.h"
#include "documents/run_format.h"
#include "documents/xml_paragraphs.h"

#include <string_view>

namespace dragoman::documents {
namespace {

bool translatablePart(const std::string& name) {
    if (name == "word/document.xml" || name == "word/footnotes.xml" || name == "word/endnotes.xml") return true;
    const bool header = name.starts_with("word/header") || name.starts_with("word/footer");
    return header && name.ends_with(".xml") && name.find('/', 5) == std::string::npos;
}

XmlRole wordRole(pugi::xml_node node) {
    if (node.type() != pugi::node_element) return XmlRole::Skip;
    const std::string_view name = node.name();
    if (name == "w:t") return XmlRole::Text;
    // A run's tab or line break splits a paragraph into pieces translated apart (a tab separates columns, a
    // break the lines of an address), so each stays where it is. A field's begin, separate and end marks split
    // too: the result of a HYPERLINK, REF or DATE field between them is a piece of its own.
    if (name == "w:tab" || name == "w:ptab" || name == "w:br" || name == "w:cr" || name == "w:fldChar")
        return std::string_view(node.parent().name()) == "w:r" ? XmlRole::Boundary : XmlRole::Skip;
    // A link inside a longer sentence is a piece of its own: the sentence's translation goes into one run, so a
    // link that shared its piece would lose its text (the empty link staying, invisible).
    if (name == "w:hyperlink" || name == "w:fldSimple") return XmlRole::Link;
    // Properties, field codes, deleted text, and a paragraph nested in this one (a text box), read on its own.
    if (name == "w:p" || name == "w:pPr" || name == "w:rPr" || name == "w:instrText" || name == "w:delText") return XmlRole::Skip;
    return XmlRole::Descend;  // runs, tracked insertions, content controls, smart tags, drawings holding text boxes
}

// A w:t's run properties, less what changes nothing a reader of this text sees: language, proofing and revision
// marks, kerning, and the complex-script and East Asian variants (fonts, sizes, bold) Word splits runs on.
std::string wordFormat(pugi::xml_node text) {
    return formattingKey(text.parent().child("w:rPr"),
                         "w:lang w:noProof w:webHidden w:rsidR w:rsidRPr w:rsidDel w:rsidRDefault w:rPrChange w:kern w:szCs w:bCs w:iCs "
                         "w:cs w:rtl w:hint w:eastAsia w:eastAsiaTheme w:cstheme w:specVanish");
}

const XmlParagraphRules& wordRules() {
    static const XmlParagraphRules rules{"Word", "//w:p", wordRole, wordFormat, true};
    return rules;
}

class DocxFormat : public DocumentFormat {
public:
    QString name() const override { return QStringLiteral("Word document"); }
    QStringList suffixes() const override { return {QStringLiteral("docx")}; }
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions&) const override {
        static const OfficeKind kind{
            "Word document", {"word/document.xml"}, translatablePart, {}, [](const std::string& xml, const std::string& entry) {
                return segmentXmlParagraphs(xml, entry, wordRules());
            }};
        return readOfficePackage(path, kind);
    }
};

}  // namespace

std::unique_ptr<DocumentFormat> docxFormat() {
    return std::make_unique<DocxFormat>();
}

}  // namespace dragoman::documents
