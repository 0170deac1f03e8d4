#include "documents/xml_paragraphs.h"

#include "documents/inline_markup.h"
#include "documents/xml_depth.h"
#include "dragoman.h"

#include <algorithm>
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

bool blank(const std::string& text) {
    return text.find_first_not_of(" \t") == std::string::npos;
}

// Text nodes in a row with the same formatting; span 0 is the piece's main formatting, 1, 2, ... its tags.
struct Group {
    std::vector<std::size_t> nodes;
    int span = 0;
};

struct Piece {
    std::vector<pugi::xml_node> texts;
    std::vector<pugi::xml_node> spaces;
    std::vector<Group> groups;
    int spans = 0;
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
                    pieceTexts_.push_back(textOf(node));
                    break;
                case XmlRole::Space:
                    // Spaces inside a piece read as one and go with the translation; spaces before its first words
                    // (an indent, after a tab) are layout and stay.
                    if (!pieceTexts_.empty()) {
                        current_.spaces.push_back(node);
                        pieceTexts_.back() += ' ';
                    }
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
        std::string text;
        for (const auto& t : pieceTexts_)
            text += t;
        const auto first = text.find_first_not_of(" \t");
        if (first != std::string::npos && hasLetters(text) && !current_.texts.empty()) {
            const auto last = text.find_last_not_of(" \t");
            current_.lead = text.substr(0, first);
            current_.trail = text.substr(last + 1);
            std::size_t most = 0;  // the main run: the one with the most words (whitespace does not count)
            for (std::size_t i = 0; i < pieceTexts_.size(); ++i) {
                const auto size =
                    pieceTexts_[i].size() - static_cast<std::size_t>(std::count(pieceTexts_[i].begin(), pieceTexts_[i].end(), ' '));
                if (size > most) most = size, current_.carrier = i;
            }
            const auto tagged = groupByFormat();
            if (tagged.empty()) {
                out_.segments.push_back(text.substr(first, last - first + 1));
                out_.tagged.push_back(false);
            } else {
                out_.segments.push_back(tagged);
                out_.tagged.push_back(true);
            }
            pieces_.push_back(std::move(current_));
        }
        current_ = Piece();
        pieceTexts_.clear();
    }

    // Groups the piece's nodes by formatting and returns its text with the groups other than the main one as
    // tags; empty when the piece has one formatting (or words that read as tags).
    std::string groupByFormat() {
        auto& piece = current_;
        if (!rules_.formatOf) return {};
        std::vector<std::string> formats;
        for (std::size_t i = 0; i < piece.texts.size(); ++i)
            formats.push_back(rules_.formatOf(piece.texts[i]));
        const auto& main = formats[piece.carrier];
        std::string previous;
        for (std::size_t i = 0; i < piece.texts.size(); ++i) {
            // Whitespace alone is never a span of its own: it reads as part of the main text.
            const auto& format = blank(pieceTexts_[i]) ? main : formats[i];
            if (piece.groups.empty() || format != previous) {
                piece.groups.push_back({});
                if (format != main) piece.groups.back().span = ++piece.spans;
            }
            piece.groups.back().nodes.push_back(i);
            previous = format;
        }
        if (piece.spans == 0) return {};
        // Each group's words, without the whitespace around the whole piece, which stays where it is.
        std::vector<std::string> words;
        std::string all;
        for (const auto& group : piece.groups) {
            words.emplace_back();
            for (const auto i : group.nodes)
                words.back() += pieceTexts_[i];
            all += words.back();
        }
        if (!taggable(all)) {  // words that read as tags: the piece goes untagged
            piece.groups.clear();
            piece.spans = 0;
            return {};
        }
        for (std::size_t g = 0, left = piece.lead.size(); g < words.size() && left > 0; ++g) {
            const auto cut = std::min(left, words[g].size());
            words[g].erase(0, cut);
            left -= cut;
        }
        for (std::size_t g = words.size(), left = piece.trail.size(); g-- > 0 && left > 0;) {
            const auto cut = std::min(left, words[g].size());
            words[g].erase(words[g].size() - cut);
            left -= cut;
        }
        std::string tagged;
        for (std::size_t g = 0; g < words.size(); ++g) {
            const int span = piece.groups[g].span;
            tagged += span ? openTag(span) + words[g] + closeTag(span) : words[g];
        }
        return tagged;
    }

    const XmlParagraphRules& rules_;
    SegmentedDocument& out_;
    std::vector<Piece>& pieces_;
    Piece current_;
    std::vector<std::string> pieceTexts_;  // each text node's text (a text:s read as a space after it)
};

void setText(pugi::xml_node node, const std::string& text, bool preserveSpace) {
    if (isPcdata(node)) {
        node.set_value(text.c_str());
        return;
    }
    node.text().set(text.c_str());
    if (preserveSpace && !text.empty()) {
        auto space = node.attribute("xml:space");
        if (!space) space = node.append_attribute("xml:space");
        space.set_value("preserve");
    }
}

// Where each chunk of a tagged translation goes: one text per group, nullopt when the answer orders its spans in a
// way the runs cannot follow.
std::optional<std::vector<std::string>> placeChunks(const Piece& piece, const std::string& translation) {
    const auto parts = parseMarked(translation, piece.spans);
    if (!parts) return std::nullopt;
    std::vector<std::string> placed(piece.groups.size());
    std::vector<int> open;
    std::size_t next = 0;  // the first group a chunk may still go to
    std::string pending;   // main text waiting for a group
    int lastSpan = -1;
    std::size_t lastGroup = 0;
    for (const auto& part : *parts) {
        if (part.kind == MarkedPart::Kind::Open) {
            open.push_back(part.span);
            continue;
        }
        if (part.kind == MarkedPart::Kind::Close) {
            open.pop_back();
            continue;
        }
        const int span = open.empty() ? 0 : open.back();
        if (span == lastSpan) {  // more of the same chunk (a nested span's words go with their innermost span)
            placed[lastGroup] += part.text;
            continue;
        }
        auto g = next;
        while (g < piece.groups.size() && piece.groups[g].span != span)
            ++g;
        if (g == piece.groups.size()) {
            // Main text where the source had no main run left (before a leading span, between two spans): it goes
            // with the words before it, or waits for the next span's. A span out of order cannot be placed.
            if (span != 0) return std::nullopt;
            if (lastSpan >= 0)
                placed[lastGroup] += part.text;
            else
                pending += part.text;
            continue;
        }
        placed[g] += pending + part.text;
        pending.clear();
        lastSpan = span;
        lastGroup = g;
        next = g + 1;
    }
    if (!pending.empty()) return std::nullopt;
    return placed;
}

}  // namespace

SegmentedDocument segmentXmlParagraphs(const std::string& xml, const std::string& entry, const XmlParagraphRules& rules) {
    auto doc = std::make_shared<pugi::xml_document>();
    const auto parsed = doc->load_buffer(xml.data(), xml.size(), pugi::parse_full | pugi::parse_ws_pcdata);
    if (!parsed) throw Error("input", "the " + rules.kind + " part " + entry + " is not valid XML: " + parsed.description());
    refuseDeepXml(*doc, "the " + rules.kind + " part " + entry);
    // Written back as UTF-8 whatever it was read as (a part may be UTF-16): its declaration must say so.
    if (auto declaration = doc->first_child(); declaration.type() == pugi::node_declaration)
        if (auto encoding = declaration.attribute("encoding")) encoding.set_value("UTF-8");
    SegmentedDocument out;
    auto pieces = std::make_shared<std::vector<Piece>>();
    PieceCollector collector(rules, out, *pieces);
    for (const auto& hit : doc->select_nodes(rules.paragraphs.c_str()))
        collector.paragraph(hit.node());
    out.rebuild = [doc, pieces, preserve = rules.preserveSpace](const std::vector<std::string>& translations) {
        for (std::size_t i = 0; i < pieces->size() && i < translations.size(); ++i) {
            auto& piece = (*pieces)[i];
            std::vector<std::string> written(piece.texts.size());
            const auto placed = piece.spans ? placeChunks(piece, translations[i]) : std::nullopt;
            if (placed) {
                for (std::size_t g = 0; g < piece.groups.size(); ++g)
                    written[piece.groups[g].nodes.front()] = (*placed)[g];
            } else {  // one formatting, or spans the runs cannot follow: all of it in the main run
                const auto parts = piece.spans ? parseMarked(translations[i], piece.spans) : std::nullopt;
                written[piece.carrier] = parts ? withoutTags(*parts) : translations[i];
            }
            written.front() = piece.lead + written.front();
            written.back() += piece.trail;
            for (std::size_t j = 0; j < piece.texts.size(); ++j)
                setText(piece.texts[j], written[j], preserve);
            for (auto space : piece.spaces)
                space.parent().remove_child(space);
            piece.spaces.clear();
        }
        std::ostringstream xml;
        doc->save(xml, "", pugi::format_raw, pugi::encoding_utf8);
        return xml.str();
    };
    return out;
}

}  // namespace dragoman::documents
