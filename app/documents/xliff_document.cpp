#include "documents/xliff_document.h"

#include "documents/document_files.h"
#include "documents/inline_markup.h"
#include "documents/xml_depth.h"
#include "dragoman.h"

#include <pugixml.hpp>

#include <memory>
#include <sstream>
#include <string_view>

namespace dragoman::documents {
namespace {

// Comments, processing instructions, whitespace and line ends as written.
constexpr unsigned kParse = (pugi::parse_full | pugi::parse_ws_pcdata) & ~pugi::parse_eol;

std::string escapeXml(const std::string& text) {
    std::string out;
    for (const char c : text) {
        if (c == '&')
            out += "&amp;";
        else if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else
            out += c;
    }
    return out;
}

std::string serialized(pugi::xml_node node) {
    std::ostringstream out;
    node.print(out, "", pugi::format_raw | pugi::format_no_declaration);
    return out.str();
}

std::string escapeAttribute(const std::string& value) {
    std::string out;
    for (const char c : escapeXml(value)) {
        if (c == '"')
            out += "&quot;";
        else if (c == '\t' || c == '\n' || c == '\r')
            out += "&#" + std::to_string(static_cast<int>(c)) + ";";  // kept as characters, not normalized to spaces
        else
            out += c;
    }
    return out;
}

// A paired code's start tag as written ("<g id="1" ctype="bold">").
std::string startTag(pugi::xml_node node) {
    std::string tag = "<" + std::string(node.name());
    for (const auto& a : node.attributes())
        tag += " " + std::string(a.name()) + "=\"" + escapeAttribute(a.value()) + "\"";
    return tag + ">";
}

struct Unit {
    pugi::xml_node container;  // 1.2: trans-unit; 2.0: segment
    pugi::xml_node source;
    SegmentedDocument text;  // the target's content, as XML
};

// The source's content as the target's: text segments, paired codes as tags around their words, standalone codes
// as empty tags, which the formatted prompt keeps in place (and the piece-by-piece fallback around them).
class TargetWriter {
public:
    explicit TargetWriter(bool version2) : version2_(version2) {}
    SegmentedDocument write(pugi::xml_node source) {
        walk(source);
        SegmentWriter out;
        if (spans_.empty() || !taggable(words_))
            writePlain(source, out);
        else
            out.markedSegment(tagged_, spans_, escapeXml);
        return out.finish();
    }

private:
    bool paired(std::string_view name) const { return version2_ ? name == "pc" || name == "mrk" : name == "g" || name == "mrk"; }

    void walk(pugi::xml_node parent) {
        for (auto node = parent.first_child(); node; node = node.next_sibling()) {
            if (node.type() == pugi::node_pcdata || node.type() == pugi::node_cdata) {
                tagged_ += node.value();
                words_ += node.value();
            } else if (node.type() == pugi::node_element) {
                const int n = static_cast<int>(spans_.size()) + 1;
                if (paired(node.name())) {
                    spans_.push_back({startTag(node), "</" + std::string(node.name()) + ">"});
                    tagged_ += openTag(n);
                    walk(node);
                    tagged_ += closeTag(n);
                } else {
                    spans_.push_back({serialized(node), {}});
                    tagged_ += openTag(n) + closeTag(n);
                }
            }
        }
    }

    // Source text that itself reads as our tags: each text node is its own segment, the codes kept around them.
    void writePlain(pugi::xml_node parent, SegmentWriter& out) {
        for (auto node = parent.first_child(); node; node = node.next_sibling()) {
            if (node.type() == pugi::node_pcdata || node.type() == pugi::node_cdata) {
                out.segment(node.value(), escapeXml);
            } else if (node.type() == pugi::node_element && paired(node.name())) {
                out.literal(startTag(node));
                writePlain(node, out);
                out.literal("</" + std::string(node.name()) + ">");
            } else if (node.type() == pugi::node_element) {
                out.literal(serialized(node));
            }
        }
    }

    bool version2_;
    std::string tagged_, words_;
    std::vector<SegmentWriter::Span> spans_;
};

bool translatable(pugi::xml_node node) {
    for (; node; node = node.parent())
        if (std::string_view(node.attribute("translate").value()) == "no") return false;
    return true;
}

bool hasContent(pugi::xml_node target) {
    return target && (target.first_child() != pugi::xml_node());
}

class XliffDocument : public ReadDocument {
public:
    XliffDocument(QString path, const ReadOptions& options) : document_(std::make_shared<pugi::xml_document>()) {
        const auto bytes = readUtf8File(path);
        // pugixml keeps no text outside the root element: the line ends around it are put back when writing.
        const auto declarationEnd = bytes.starts_with("<?xml") ? bytes.find("?>") : std::string::npos;
        if (declarationEnd != std::string::npos && bytes.compare(declarationEnd + 2, 1, "\n") == 0) afterDeclaration_ = "\n";
        if (declarationEnd != std::string::npos && bytes.compare(declarationEnd + 2, 2, "\r\n") == 0) afterDeclaration_ = "\r\n";
        if (bytes.ends_with("\n")) finalLineEnd_ = bytes.ends_with("\r\n") ? "\r\n" : "\n";
        const auto parsed = document_->load_buffer(bytes.data(), bytes.size(), kParse, pugi::encoding_utf8);
        if (!parsed)
            throw Error("input", path.toStdString() + " is not valid XML (" + parsed.description() + " at byte " +
                                     std::to_string(parsed.offset) + ")");
        refuseDeepXml(*document_, path.toStdString());
        auto root = document_->document_element();
        if (std::string_view(root.name()) != "xliff")
            throw Error("input", path.toStdString() + " is not an XLIFF document (its root is <" + root.name() + ">)");
        const std::string version = root.attribute("version").value();
        version2_ = version.starts_with("2.");
        if (!version2_ && !version.starts_with("1."))
            throw Error("input", path.toStdString() + ": XLIFF version '" + version + "' is not read (1.x and 2.x are)");
        if (version2_) {
            if (!root.attribute("trgLang")) root.append_attribute("trgLang") = options.targetLanguage.c_str();
        } else {
            for (const auto& file : root.children("file"))
                if (auto f = file; !f.attribute("target-language")) {
                    auto added = f.attribute("source-language")
                                     ? f.insert_attribute_after("target-language", f.attribute("source-language"))
                                     : f.append_attribute("target-language");
                    added = options.targetLanguage.c_str();
                }
        }
        const auto units = document_->select_nodes(version2_ ? "//unit/segment" : "//trans-unit");
        for (const auto& hit : units) {
            const auto container = hit.node();
            const auto source = container.child("source");
            if (!source || !translatable(container)) continue;
            if (hasContent(container.child("target")) && !options.retranslate) continue;
            units_.push_back({container, source, TargetWriter(version2_).write(source)});
        }
    }

    std::vector<std::string> segments() const override {
        std::vector<std::string> all;
        for (const auto& unit : units_)
            all.insert(all.end(), unit.text.segments.begin(), unit.text.segments.end());
        return all;
    }
    std::vector<bool> taggedSegments() const override {
        std::vector<bool> all;
        for (const auto& unit : units_) {
            auto own = unit.text.tagged;
            own.resize(unit.text.segments.size(), false);
            all.insert(all.end(), own.begin(), own.end());
        }
        return all;
    }
    void write(const QString& output, const std::vector<std::string>& translations) const override {
        auto next = translations.begin();
        for (const auto& unit : units_) {
            const std::vector<std::string> own(next, next + static_cast<std::ptrdiff_t>(unit.text.segments.size()));
            next += static_cast<std::ptrdiff_t>(unit.text.segments.size());
            auto container = unit.container;  // a handle
            auto target = container.child("target");
            if (!target) {
                // The schemas' order: 1.2's target after source and seg-source; 2.0's after source.
                const auto segSource = container.child("seg-source");
                target = container.insert_child_after("target", segSource ? segSource : unit.source);
            }
            while (target.first_child())
                target.remove_child(target.first_child());
            const auto xml = unit.text.rebuild(own);
            if (!xml.empty() && !target.append_buffer(xml.data(), xml.size(), kParse | pugi::parse_fragment, pugi::encoding_utf8))
                throw Error("io", "a translated XLIFF target is not well-formed XML: " + xml.substr(0, 200));
            if (version2_) {
                setAttribute(container, "state", "translated");
            } else {
                setAttribute(target, "state", "needs-review-translation");
                setAttribute(target, "state-qualifier", "mt-suggestion");
            }
        }
        std::ostringstream out;
        document_->save(out, "", pugi::format_raw, pugi::encoding_utf8);
        auto text = out.str();
        if (const auto end = text.find("?>"); !afterDeclaration_.empty() && text.starts_with("<?xml") && end != std::string::npos)
            text.insert(end + 2, afterDeclaration_);
        if (!finalLineEnd_.empty() && !text.ends_with(finalLineEnd_)) text += finalLineEnd_;
        writeAtomically(output, text);
    }

private:
    static void setAttribute(pugi::xml_node node, const char* name, const char* value) {
        auto a = node.attribute(name);
        if (!a) a = node.append_attribute(name);
        a.set_value(value);
    }

    std::shared_ptr<pugi::xml_document> document_;
    std::string afterDeclaration_, finalLineEnd_;
    bool version2_ = false;
    std::vector<Unit> units_;
};

class XliffFormat : public DocumentFormat {
public:
    QString name() const override { return QStringLiteral("XLIFF"); }
    QStringList suffixes() const override { return {QStringLiteral("xlf"), QStringLiteral("xliff")}; }
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions& options) const override {
        return std::make_unique<XliffDocument>(path, options);
    }
};

}  // namespace

std::unique_ptr<DocumentFormat> xliffFormat() {
    return std::make_unique<XliffFormat>();
}

}  // namespace dragoman::documents
