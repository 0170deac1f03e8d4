#include "documents/docx_document.h"

#include "documents/document_files.h"
#include "documents/segmented_document.h"
#include "dragoman.h"

#include <QFile>

#include <zip.h>
#include <pugixml.hpp>

#include <map>
#include <memory>
#include <sstream>
#include <vector>

namespace dragoman::documents {
namespace {

constexpr zip_uint64_t kMaxPartBytes = 256ull * 1024 * 1024;  // a document.xml beyond this is not a real document

struct ZipCloser {
    void operator()(zip_t* z) const { zip_discard(z); }
};
using Zip = std::unique_ptr<zip_t, ZipCloser>;

Zip openZip(const QString& path, int flags) {
    int error = 0;
    zip_t* z = zip_open(QFile::encodeName(path).constData(), flags, &error);
    if (!z) {
        zip_error_t e;
        zip_error_init_with_code(&e, error);
        const std::string why = zip_error_strerror(&e);
        zip_error_fini(&e);
        throw Error("input", path.toStdString() + " is not a Word document (not a readable ZIP package: " + why + ")");
    }
    return Zip(z);
}

std::string readEntry(zip_t* z, zip_int64_t index, const std::string& name) {
    zip_stat_t st;
    if (zip_stat_index(z, static_cast<zip_uint64_t>(index), 0, &st) != 0 || st.size > kMaxPartBytes)
        throw Error("input", "the Word part " + name + " is unreadable or too large");
    std::string data(st.size, '\0');
    zip_file_t* f = zip_fopen_index(z, static_cast<zip_uint64_t>(index), 0);
    if (!f) throw Error("input", "the Word part " + name + " cannot be read: " + zip_strerror(z));
    const auto got = zip_fread(f, data.data(), st.size);
    zip_fclose(f);
    if (got < 0 || static_cast<zip_uint64_t>(got) != st.size) throw Error("input", "the Word part " + name + " is damaged");
    return data;
}

bool translatablePart(const std::string& name) {
    if (name == "word/document.xml" || name == "word/footnotes.xml" || name == "word/endnotes.xml") return true;
    const bool header = name.starts_with("word/header") || name.starts_with("word/footer");
    return header && name.ends_with(".xml") && name.find('/', 5) == std::string::npos;
}

// A run's tab or line break, which splits a paragraph's text into pieces translated apart (a tab separates
// columns, a break separates lines of an address), so each one stays where it is. A w:tab that is not in a run
// is a tab stop's definition in the paragraph properties. A field's begin, separate and end marks (w:fldChar) split
// too: the result of a HYPERLINK, REF or DATE field between them is a piece of its own, like a w:hyperlink's text.
bool isRunBoundary(pugi::xml_node node) {
    const std::string_view name = node.name();
    return (name == "w:tab" || name == "w:ptab" || name == "w:br" || name == "w:cr" || name == "w:fldChar") &&
           std::string_view(node.parent().name()) == "w:r";
}

// The hyperlink (w:hyperlink, or a simple field such as HYPERLINK in w:fldSimple) around `node` inside
// paragraph `p`, or a null node. A link inside a longer sentence is a piece of its own: the sentence's translation
// goes into one run, so a link that shared its piece lost its text (the empty link stayed, invisible). Translated
// apart, the link keeps its words and target, at the cost of the sentence's context around it.
pugi::xml_node enclosingLink(pugi::xml_node node, pugi::xml_node p) {
    for (auto n = node.parent(); n && n != p; n = n.parent()) {
        const std::string_view name = n.name();
        if (name == "w:hyperlink" || name == "w:fldSimple") return n;
    }
    return {};
}

// The nodes of paragraph `p` itself (not of a paragraph nested in it, as in a text box) that carry text or
// split it: its w:t elements and its runs' tabs, breaks and field marks, in document order.
std::vector<pugi::xml_node> ownTextAndBoundaries(pugi::xml_node p) {
    std::vector<pugi::xml_node> nodes;
    auto hits = p.select_nodes(".//w:t | .//w:tab | .//w:ptab | .//w:br | .//w:cr | .//w:fldChar");
    hits.sort();
    for (const auto& hit : hits) {
        const auto node = hit.node();
        if (std::string_view(node.name()) != "w:t" && !isRunBoundary(node)) continue;
        auto owner = node.parent();
        while (owner && std::string_view(owner.name()) != "w:p")
            owner = owner.parent();
        if (owner == p) nodes.push_back(node);
    }
    return nodes;
}

// One piece of a paragraph between tabs, breaks, field marks and hyperlink edges: its w:t nodes and the whitespace around its text, which
// stays where it was. The translation goes into the node that held the most text, so the piece takes its
// dominant formatting (a bold lead-in word does not make the whole sentence bold); the other nodes are emptied.
struct Piece {
    std::vector<pugi::xml_node> texts;
    std::size_t carrier = 0;
    std::string lead, trail;
};

void addPiece(std::vector<pugi::xml_node>& texts, SegmentedDocument& out, std::vector<Piece>& pieces) {
    std::string text;
    Piece piece;
    std::size_t most = 0;
    for (std::size_t i = 0; i < texts.size(); ++i) {
        const std::string_view t = texts[i].text().get();
        if (t.size() > most) most = t.size(), piece.carrier = i;
        text += t;
    }
    const auto first = text.find_first_not_of(" \t");
    if (first != std::string::npos && hasLetters(text)) {
        const auto last = text.find_last_not_of(" \t");
        out.segments.push_back(text.substr(first, last - first + 1));
        piece.lead = text.substr(0, first);
        piece.trail = text.substr(last + 1);
        piece.texts = std::move(texts);
        pieces.push_back(std::move(piece));
    }
    texts.clear();
}

SegmentedDocument segmentPart(const std::string& xml, const std::string& name) {
    auto doc = std::make_shared<pugi::xml_document>();
    const auto parsed = doc->load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_ws_pcdata | pugi::parse_declaration);
    if (!parsed) throw Error("input", "the Word part " + name + " is not valid XML: " + parsed.description());
    SegmentedDocument out;
    auto pieces = std::make_shared<std::vector<Piece>>();
    for (const auto& hit : doc->select_nodes("//w:p")) {
        std::vector<pugi::xml_node> texts;
        pugi::xml_node link;  // the hyperlink around the current piece's text, if any
        for (const auto& node : ownTextAndBoundaries(hit.node())) {
            if (std::string_view(node.name()) != "w:t") {
                addPiece(texts, out, *pieces);
                continue;
            }
            const auto around = enclosingLink(node, hit.node());
            if (around != link) addPiece(texts, out, *pieces);
            link = around;
            texts.push_back(node);
        }
        addPiece(texts, out, *pieces);
    }
    out.rebuild = [doc, pieces](const std::vector<std::string>& translations) {
        for (std::size_t i = 0; i < pieces->size() && i < translations.size(); ++i) {
            const auto& piece = (*pieces)[i];
            for (std::size_t j = 0; j < piece.texts.size(); ++j) {
                auto node = piece.texts[j];  // a handle: the copy refers to the same node
                node.text().set(j == piece.carrier ? (piece.lead + translations[i] + piece.trail).c_str() : "");
            }
            auto carrier = piece.texts[piece.carrier];
            auto space = carrier.attribute("xml:space");
            if (!space) space = carrier.append_attribute("xml:space");
            space.set_value("preserve");
        }
        std::ostringstream xml;
        doc->save(xml, "", pugi::format_raw, pugi::encoding_utf8);
        return xml.str();
    };
    return out;
}

// Package entry name (word/document.xml, ...) -> its paragraphs as segments.
using DocxParts = std::map<std::string, SegmentedDocument>;

DocxParts readDocx(const QString& path) {
    auto zip = openZip(path, ZIP_RDONLY);
    DocxParts result;
    const auto count = zip_get_num_entries(zip.get(), 0);
    bool hasBody = false;
    for (zip_int64_t i = 0; i < count; ++i) {
        const char* entry = zip_get_name(zip.get(), static_cast<zip_uint64_t>(i), 0);
        if (!entry) continue;
        const std::string name = entry;
        hasBody = hasBody || name == "word/document.xml";
        if (translatablePart(name)) result.emplace(name, segmentPart(readEntry(zip.get(), i, name), name));
    }
    if (!hasBody) throw Error("input", path.toStdString() + " is not a Word document (no word/document.xml in the package)");
    return result;
}

// Writes `path`'s package to `out` (which must not exist) with the given parts replaced.
void writeDocx(const QString& path, const QString& out, const std::map<std::string, std::string>& replacedParts) {
    // libzip rewrites an archive in place: copy the package, replace the parts in the copy, close it. The copy
    // fails rather than replace an existing file.
    if (!QFile::copy(path, out)) throw Error("io", "cannot write " + out.toStdString());
    int error = 0;
    zip_t* z = zip_open(QFile::encodeName(out).constData(), 0, &error);
    if (!z) throw Error("io", "cannot reopen " + out.toStdString() + " as a ZIP package");
    for (const auto& [name, data] : replacedParts) {
        const auto index = zip_name_locate(z, name.c_str(), 0);
        zip_source_t* source = zip_source_buffer(z, data.data(), data.size(), 0);
        if (index < 0 || !source || zip_file_replace(z, static_cast<zip_uint64_t>(index), source, 0) != 0) {
            if (source) zip_source_free(source);
            zip_discard(z);
            throw Error("io", "cannot replace " + name + " in " + out.toStdString());
        }
    }
    if (zip_close(z) != 0) {
        const std::string why = zip_strerror(z);
        zip_discard(z);
        throw Error("io", "cannot write " + out.toStdString() + ": " + why);
    }
}

class DocxDocument : public ReadDocument {
public:
    DocxDocument(QString path, DocxParts parts) : path_(std::move(path)), parts_(std::move(parts)) {}
    std::vector<std::string> segments() const override {
        std::vector<std::string> all;
        for (const auto& [name, part] : parts_)
            all.insert(all.end(), part.segments.begin(), part.segments.end());
        return all;
    }
    void write(const QString& output, const std::vector<std::string>& translations) const override {
        std::map<std::string, std::string> replaced;
        auto next = translations.begin();
        for (const auto& [name, part] : parts_) {
            if (part.segments.empty()) continue;
            const std::vector<std::string> own(next, next + static_cast<std::ptrdiff_t>(part.segments.size()));
            next += static_cast<std::ptrdiff_t>(part.segments.size());
            replaced.emplace(name, part.rebuild(own));
        }
        writeBesideThenRename(output, [&](const QString& temporary) { writeDocx(path_, temporary, replaced); });
    }

private:
    QString path_;
    DocxParts parts_;
};

class DocxFormat : public DocumentFormat {
public:
    QString name() const override { return QStringLiteral("Word document"); }
    QStringList suffixes() const override { return {QStringLiteral("docx")}; }
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions&) const override {
        return std::make_unique<DocxDocument>(path, readDocx(path));
    }
};

}  // namespace

std::unique_ptr<DocumentFormat> docxFormat() {
    return std::make_unique<DocxFormat>();
}

}  // namespace dragoman::documents
