#pragma once
// translate-file: a document in, a translated copy with the same structure out, for every format in
// document_format.h (every format keeps its structure; a PDF's text becomes a
// .txt). The input is never written to, an existing file is never overwritten, and a failed or cancelled job
// leaves no output behind.
#include "documents/document_format.h"
#include "documents/segmented_document.h"
#include "dragoman.h"

#include <QString>

#include <functional>
#include <string>
#include <vector>

namespace dragoman::documents {
// Documents larger than this are refused before anything is read.
constexpr qint64 kMaxDocumentBytes = 64ll * 1024 * 1024;

// "report.md" -> "report.de.md" beside it ("scan.pdf" -> "scan.de.txt"); "report.de (2).md" and so on when
// that name is taken.
QString defaultOutputPath(const QString& input, const QString& targetLanguage);

struct DocumentRequest {
    QString input;
    QString output;  // empty: defaultOutputPath(input, to)
    std::string to;  // target language code (HTML's lang attribute, the output name)
    // Translates one segment (a paragraph, a cue, a cell); throws to stop the job (Cancelled for a user's stop).
    std::function<std::string(const std::string& text)> translate;
    // Called with 0 first, then as each distinct segment is done (done == total after the last); never from two
    // threads at once.
    std::function<void(std::size_t done, std::size_t total)> progress;
    // Segments translated at once, on as many threads (their decoding steps are shared by the model): more
    // than 1 only where `translate` may be called from several threads together. The output is the same.
    int parallel = 1;
    // Translates a segment that carries inline markup as tags (inline_markup.h: bold words, a link, XLIFF's codes)
    // with a prompt that keeps them (HY-MT's formatted-text template); unset, or when an answer loses, repeats or
    // misnests a tag: the text between the tags goes through `translate` piece by piece.
    std::function<std::string(const std::string& tagged)> translateFormatted;
    // Formats that hold translations already (PO): translate the entries that have one too.
    bool retranslate = false;
    // Translates a whole data document (JSON, YAML; `format` names it) with a structured-data prompt, for models
    // that have one (Hy-MT2); unset: data documents go one value at a time. A document up to
    // kMaxStructuredBytes goes whole; an answer that breaks its structure is dropped for one value at a time.
    std::function<std::string(const std::string& text, const std::string& format)> translateStructured;
};

constexpr std::size_t kMaxStructuredBytes = 4096;

// Whether requests shaped like `sample` (its instructions and prompt profile) may send a data document whole to a
// model whose prompts are `modelProfile`'s: Hy-MT2's structured prompt, which carries no other instruction.
bool takesStructuredPrompt(const std::string& modelProfile, const TranslationRequest& sample);

// Whether segments with inline markup may go with the formatted-text prompt, to a model with prompts (`chat`),
// for requests shaped like `sample`: that prompt carries no glossary, context or other instruction.
bool takesFormattedPrompt(bool chat, const TranslationRequest& sample);

struct DocumentResult {
    QString output;
    QString format;              // its name ("Markdown")
    std::size_t segments = 0;    // distinct segments translated
    std::size_t keptSource = 0;  // of them, those the model answered with nothing: their source text was kept
    bool whole = false;          // a data document translated whole, with the structured prompt
    std::size_t tagged = 0;      // distinct segments with inline markup
    std::size_t tagsLost = 0;    // of them, those whose formatted answer lost its tags: translated piece by piece
    // Segments whose translation has other placeholders ({name}, %s, ...) than their source, after a data
    // document's such values were retranslated one at a time.
    std::size_t changedPlaceholders = 0;
    // Text kept untranslated because it did not read as the format says ("line 12: ..."; ReadDocument::keptAsIs).
    std::vector<std::string> keptAsIs;
};

// The translations of a document held in memory (the server's LibreTranslate HTML), segment by segment as
// translateDocument() makes them: each distinct segment once, inline markup kept (translateFormatted, else the text
// between the tags piece by piece), an empty answer keeping its source. Uses `translate`, `translateFormatted` and
// `parallel` of the request.
std::vector<std::string> translateSegments(const SegmentedDocument& document, const DocumentRequest& request);

// Throws Error("input") for an unsupported, unreadable, oversized, non-UTF-8 or malformed document,
// Error("io") for an output that exists or cannot be written, and whatever `translate` throws.
DocumentResult translateDocument(const DocumentRequest& request);

}  // namespace dragoman::documents
