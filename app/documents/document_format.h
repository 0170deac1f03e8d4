#pragma once
// One kind of document translate-file reads. A format names its suffixes, takes a file apart into segments and
// writes the translated copy; document_translation.cpp does everything else (the checks, translating each
// distinct segment once, progress, never overwriting) the same way for every format. Adding a format is one
// class and one line in document_formats.cpp.
#include <QString>
#include <QStringList>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dragoman::documents {

// A document read and taken apart, ready to be written back translated.
class ReadDocument {
public:
    virtual ~ReadDocument() = default;
    // Every segment in reading order (a repeated one as often as it occurs).
    virtual std::vector<std::string> segments() const = 0;
    // Writes the translated copy to `output`, a name no file has, with one translation per segment: whole or not
    // at all. Throws Error("io").
    virtual void write(const QString& output, const std::vector<std::string>& translations) const = 0;
    // Which segments carry inline markup as tags (inline_markup.h): their translations must keep the tags.
    // Empty: none.
    virtual std::vector<bool> taggedSegments() const { return {}; }
    // Text kept untranslated because it did not read as the format says, one note each ("line N: ...").
    virtual std::vector<std::string> keptAsIs() const { return {}; }

    // Data documents (JSON, YAML) can also go to the model whole, with Hy-MT2's structured-data prompt: the
    // format's name ("JSON"; empty for other documents), the text, and the translations a translated copy of
    // that text holds for segments(), in order: nullopt when the copy broke the structure (other keys, nesting,
    // numbers or booleans, or not the format at all).
    virtual std::string dataFormat() const { return {}; }
    virtual std::string dataText() const { return {}; }
    virtual std::optional<std::vector<std::string>> translationsIn(const std::string&) const { return std::nullopt; }
};

// What a read is for.
struct ReadOptions {
    std::string targetLanguage;  // the code translated into (HTML's lang attribute, a PO file's header)
    bool retranslate = false;    // formats that hold translations already (PO): translate those entries again
};

class DocumentFormat {
public:
    virtual ~DocumentFormat() = default;
    virtual QString name() const = 0;          // for people: "Markdown"
    virtual QStringList suffixes() const = 0;  // lower case, without the dot
    // The translated copy's suffix for an input with `inputSuffix`: the same unless the format writes another
    // kind of file (a PDF's text becomes .txt).
    virtual QString outputSuffix(const QString& inputSuffix) const { return inputSuffix; }
    // Throws Error("input") for a file this format cannot read (malformed, not UTF-8 where text is expected).
    virtual std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions& options) const = 0;
};

// Every format translate-file reads.
const std::vector<std::unique_ptr<DocumentFormat>>& documentFormats();
// By the file's suffix (case-insensitive); null for anything else.
const DocumentFormat* formatOf(const QString& path);
// "*.txt *.md ..." for file dialogs and error messages.
QString supportedPatterns();

}  // namespace dragoman::documents
