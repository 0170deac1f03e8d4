#pragma once
// A Markdown paragraph's inline syntax: emphasis (*, _, **, __, ~~) and link or image text become tagged spans
// around their words, code spans, autolinks, bare URLs and unpaired HTML tags keep their places as standalone
// markup, paired inline HTML (<b>…</b>) is a span like emphasis (marked_run.h).
#include "documents/segmented_document.h"

#include <string_view>

namespace dragoman::documents {

void writeMarkdownInline(SegmentWriter& out, std::string_view text);

}  // namespace dragoman::documents
