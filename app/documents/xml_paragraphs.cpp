#include "documents/xml_paragraphs.h"

#include "dragoman.h"

#include <memory>
#include <sstream>
#include <vector>

namespace dragoman::documents {
namespace {

bool isPcdata(pugi::xml_node node) {
    return node.type() == pugi::node_pcdata || node.type() == pugi::node_cdata;
}

std::string textOf(pugi::xml_node node) {
    return isPcdata(node) ? node.value() : node.text().get();
}

void setText(pugi::xml_node node, const std::string& text) {
    if (isPcdata(node))
        node.set_value(text.c_str());
    else
        node.text().set(text.c_str());
}

struct Piece {
    std::vector<pugi::xml_node> texts;
    std::vector<pugi::xml_node> spaces;
    std::size_t carrier = 0;
    std::string lead, trail;
};

class PieceCollector {
public:
    PieceCollector(const XmlParagraphRules& rules, SegmentedDocument& out, std::vector<Piece>& pieces)
        : rules_(rules), out_(out), pieces_(pieces) {}

    void paragraph(pugi::xml_node p) {
        walk(p);
        end();
    }

private:
    void walk(pugi::xml_node parent) {
        for (auto node = parent.first_child(); node; node = node.next_sibling()) {
            switch (rules_.roleOf(node)) {
                case XmlRole::Text:
                    current_.texts.push_back(node);
                    text_ += textOf(node);
                    break;
                case XmlRole::Space:
                    current_.spaces.push_back(node);
                    text_ += ' ';
                    break;
                case XmlRole::Descend:
                    walk(node);
                    break;
                case XmlRole::Link:
                    end();
                    walk(node);
                    end();
                    break;
                case XmlRole::Boundary:
                    end();
                    break;
                case XmlRole::Skip:
                    break;
            }
        }
    }

    // The piece read so far becomes a segment when it has letters; otherwise it stays as it is.
    void end() {
        const auto first = text_.find_first_not_of(" \t");
        if (first != std::string::npos && hasLetters(text_) && !current_.texts.empty()) {
            const auto last = text_.find_last_not_of(" \t");
            out_.segments.push_back(text_.substr(first, last - first + 1));
            current_.lead = text_.substr(0, first);
            current_.trail = text_.substr(last + 1);
            std::size_t most = 0;
            for (std::size_t i = 0; i < current_.texts.size(); ++i)
                if (const auto size = textOf(current_.texts[i]).size(); size > most) most = size, current_.carrier = i;
            pieces_.push_back(std::move(current_));
        }
        current_ = Piece();
        text_.clear();
    }

    const XmlParagraphRules& rules_;
    SegmentedDocument& out_;
    std::vector<Piece>& pieces_;
    Piece current_;
    std::string text_;
};

}  // namespace

SegmentedDocument segmentXmlParagraphs(const std::string& xml, const std::string& entry, const XmlParagraphRules& rules) {
    auto doc = std::make_shared<pugi::xml_document>();
    const auto parsed = doc->load_buffer(xml.data(), xml.size(), pugi::parse_full | pugi::parse_ws_pcdata);
    if (!parsed) throw Error("input", "the " + rules.kind + " part " + entry + " is not valid XML: " + parsed.description());
    SegmentedDocument out;
    auto pieces = std::make_shared<std::vector<Piece>>();
    PieceCollector collector(rules, out, *pieces);
    for (const auto& hit : doc->select_nodes(rules.paragraphs.c_str()))
        collector.paragraph(hit.node());
    out.rebuild = [doc, pieces, preserve = rules.preserveSpace](const std::vector<std::string>& translations) {
        for (std::size_t i = 0; i < pieces->size() && i < translations.size(); ++i) {
            auto& piece = (*pieces)[i];
            for (std::size_t j = 0; j < piece.texts.size(); ++j)
                setText(piece.texts[j], j == piece.carrier ? piece.lead + translations[i] + piece.trail : std::string());
            for (auto space : piece.spaces)
                space.parent().remove_child(space);
            piece.spaces.clear();
            if (preserve) {
                auto carrier = piece.texts[piece.carrier];
                auto space = carrier.attribute("xml:space");
                if (!space) space = carrier.append_attribute("xml:space");
                space.set_value("preserve");
            }
        }
        std::ostringstream xml;
        doc->save(xml, "", pugi::format_raw, pugi::encoding_utf8);
        return xml.str();
    };
    return out;
}

}  // namespace dragoman::documents
