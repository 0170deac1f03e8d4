#include "documents/docx_document.h"

#include "util/error.h"

#include <QFile>

#include <zip.h>
#include <pugixml.hpp>

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

// The text runs (w:t) that belong to paragraph `p` itself, not to a paragraph nested in it (text boxes).
std::vector<pugi::xml_node> ownTexts(pugi::xml_node p) {
    std::vector<pugi::xml_node> texts;
    for (const auto& hit : p.select_nodes(".//w:t")) {
        auto owner = hit.node().parent();
        while (owner && std::string_view(owner.name()) != "w:p")
            owner = owner.parent();
        if (owner == p) texts.push_back(hit.node());
    }
    return texts;
}

SegmentedDocument segmentPart(const std::string& xml, const std::string& name) {
    auto doc = std::make_shared<pugi::xml_document>();
    const auto parsed = doc->load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_ws_pcdata | pugi::parse_declaration);
    if (!parsed) throw Error("input", "the Word part " + name + " is not valid XML: " + parsed.description());
    SegmentedDocument out;
    auto paragraphs = std::make_shared<std::vector<std::vector<pugi::xml_node>>>();
    for (const auto& hit : doc->select_nodes("//w:p")) {
        auto texts = ownTexts(hit.node());
        std::string text;
        for (const auto& t : texts)
            text += t.text().get();
        const auto first = text.find_first_not_of(" \t");
        if (first == std::string::npos || !hasLetters(text)) continue;
        out.segments.push_back(text.substr(first, text.find_last_not_of(" \t") - first + 1));
        paragraphs->push_back(std::move(texts));
    }
    out.rebuild = [doc, paragraphs](const std::vector<std::string>& translations) {
        for (std::size_t i = 0; i < paragraphs->size() && i < translations.size(); ++i) {
            auto texts = (*paragraphs)[i];  // node handles: copies refer to the same nodes
            for (std::size_t j = 0; j < texts.size(); ++j)
                texts[j].text().set(j == 0 ? translations[i].c_str() : "");
            auto space = texts[0].attribute("xml:space");
            if (!space) space = texts[0].append_attribute("xml:space");
            space.set_value("preserve");
        }
        std::ostringstream xml;
        doc->save(xml, "", pugi::format_raw, pugi::encoding_utf8);
        return xml.str();
    };
    return out;
}

}  // namespace

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
        if (translatablePart(name)) result.parts.emplace(name, segmentPart(readEntry(zip.get(), i, name), name));
    }
    if (!hasBody) throw Error("input", path.toStdString() + " is not a Word document (no word/document.xml in the package)");
    return result;
}

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

}  // namespace dragoman::documents
