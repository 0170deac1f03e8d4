#include "documents/opendocument_document.h"

#include "documents/office_package.h"
#include "documents/xml_paragraphs.h"

#include <string_view>

namespace dragoman::documents {
namespace {

XmlRole openDocumentRole(pugi::xml_node node) {
    if (node.type() == pugi::node_pcdata || node.type() == pugi::node_cdata) return XmlRole::Text;
    if (node.type() != pugi::node_element) return XmlRole::Skip;
    const std::string_view name = node.name();
    if (name == "text:span" || name == "text:meta" || name == "text:ruby" || name == "text:ruby-base") return XmlRole::Descend;
    if (name == "text:a") return XmlRole::Link;
    if (name == "text:s") return XmlRole::Space;
    // Anchors and marks take no room in the text; a footnote, an annotation or a frame anchored in the sentence
    // holds paragraphs of its own, read on their own, and its citation number is not prose.
    if (name == "text:soft-page-break" || name.starts_with("text:bookmark") || name.starts_with("text:reference-mark") ||
        name.starts_with("text:change") || name.starts_with("text:toc-mark") || name.starts_with("text:alphabetical-index-mark") ||
        name == "text:note" || name.starts_with("office:annotation") || name.starts_with("draw:") || name == "text:ruby-text")
        return XmlRole::Skip;
    return XmlRole::Boundary;  // tabs, line breaks, and fields (dates, page numbers, references): their text stays
}

// The styles of the spans around a text node, innermost first (empty: the paragraph's own).
std::string openDocumentFormat(pugi::xml_node text) {
    std::string key;
    for (auto node = text.parent(); node && std::string_view(node.name()) == "text:span"; node = node.parent())
        key += std::string(node.attribute("text:style-name").value()) + " " + node.attribute("text:class-names").value() + ";";
    return key;
}

const XmlParagraphRules& openDocumentRules() {
    static const XmlParagraphRules rules{"OpenDocument", "//text:p | //text:h", openDocumentRole, openDocumentFormat, false};
    return rules;
}

OfficeKind openDocumentKind(std::string name, std::string mimetype) {
    return OfficeKind{
        std::move(name),
        {"content.xml"},
        [](const std::string& entry) { return entry == "content.xml" || entry == "styles.xml"; },
        [mimetype](const std::function<std::string(const std::string&)>& readEntry) -> std::string {
            const auto found = readEntry("mimetype");
            if (found == mimetype) return {};
            return found.empty() ? "no mimetype entry" : "its mimetype is " + found.substr(0, 100);
        },
        [](const std::string& xml, const std::string& entry) { return segmentXmlParagraphs(xml, entry, openDocumentRules()); }};
}

class OpenDocumentFormat : public DocumentFormat {
public:
    OpenDocumentFormat(QString name, QString suffix, std::string mimetype)
        : name_(std::move(name)), suffix_(std::move(suffix)), kind_(openDocumentKind(name_.toStdString(), std::move(mimetype))) {}
    QString name() const override { return name_; }
    QStringList suffixes() const override { return {suffix_}; }
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions&) const override { return readOfficePackage(path, kind_); }

private:
    QString name_, suffix_;
    OfficeKind kind_;
};

}  // namespace

std::unique_ptr<DocumentFormat> openDocumentTextFormat() {
    return std::make_unique<OpenDocumentFormat>(QStringLiteral("OpenDocument text"), QStringLiteral("odt"),
                                                "application/vnd.oasis.opendocument.text");
}

std::unique_ptr<DocumentFormat> openDocumentPresentationFormat() {
    return std::make_unique<OpenDocumentFormat>(QStringLiteral("OpenDocument presentation"), QStringLiteral("odp"),
                                                "application/vnd.oasis.opendocument.presentation");
}

}  // namespace dragoman::documents
