#include "documents/pptx_document.h"

#include "documents/office_package.h"
#include "documents/run_format.h"
#include "documents/xml_paragraphs.h"

#include <QRegularExpression>

#include <string_view>

namespace dragoman::documents {
namespace {

bool translatablePart(const std::string& entry) {
    static const QRegularExpression part(QStringLiteral(R"(^ppt/(?:slides/slide|notesSlides/notesSlide)\d+\.xml$)"));
    return part.match(QString::fromStdString(entry)).hasMatch();
}

XmlRole drawingRole(pugi::xml_node node) {
    if (node.type() != pugi::node_element) return XmlRole::Skip;
    const std::string_view name = node.name();
    if (name == "a:t") return XmlRole::Text;
    if (name == "a:r") return node.child("a:rPr").child("a:hlinkClick") ? XmlRole::Link : XmlRole::Descend;
    if (name == "a:br" || name == "a:fld") return XmlRole::Boundary;
    return XmlRole::Skip;  // paragraph and run properties, equations
}

// An a:t's run properties, less what changes nothing a reader sees: language, spelling and "dirty" marks,
// kerning, and a baseline shift of zero.
std::string drawingFormat(pugi::xml_node text) {
    return formattingKey(text.parent().child("a:rPr"), "lang altLang dirty err noProof smtClean smtId bmk kern baseline=0 a:ea a:cs");
}

const XmlParagraphRules& drawingRules() {
    static const XmlParagraphRules rules{"PowerPoint", "//a:p", drawingRole, drawingFormat, false};
    return rules;
}

class PptxFormat : public DocumentFormat {
public:
    QString name() const override { return QStringLiteral("PowerPoint presentation"); }
    QStringList suffixes() const override { return {QStringLiteral("pptx")}; }
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions&) const override {
        static const OfficeKind kind{
            "PowerPoint presentation",
            {"ppt/presentation.xml"},
            translatablePart,
            {},
            [](const std::string& xml, const std::string& entry) { return segmentXmlParagraphs(xml, entry, drawingRules()); }};
        return readOfficePackage(path, kind);
    }
};

}  // namespace

std::unique_ptr<DocumentFormat> pptxFormat() {
    return std::make_unique<PptxFormat>();
}

}  // namespace dragoman::documents
