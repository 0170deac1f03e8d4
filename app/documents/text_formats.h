#pragma once
// The text formats translate-file reads, each taken apart into segments (segmented_document.h):
// - plain text: paragraphs, with hard-wrapped lines joined into one (a sentence must reach the model whole);
// - Markdown: headings, list items, quotes and table cells by their text; code blocks, front matter, HTML
//   blocks, inline code, link targets and autolinks kept as they are;
// - subtitles (SubRip .srt, WebVTT .vtt): cue numbers, timings, settings, NOTE/STYLE blocks kept, each cue's
//   text translated as one sentence and wrapped back onto as many lines as it had;
// - HTML: text between tags, with scripts, styles, <pre>/<code> and comments kept; entities decoded for the
//   model and the text re-escaped, alt/title/placeholder/aria-label values too; the <html lang> attribute set
//   to the target language.
// Input is UTF-8 (a byte-order mark is kept); the caller checks it.
#include "documents/segmented_document.h"

namespace dragoman::documents {

SegmentedDocument segmentPlainText(std::string_view text);
SegmentedDocument segmentMarkdown(std::string_view text);
SegmentedDocument segmentSubtitles(std::string_view text);
SegmentedDocument segmentHtml(std::string_view text, const std::string& targetLanguage);

}  // namespace dragoman::documents
