#pragma once
// XLIFF, the exchange format of translation tools (CAT tools, Qt's lconvert, Okapi, Weblate), versions 1.2 and
// 2.0: every unit's source that has no target yet (all of them with --retranslate) gets one, marked for review
// (1.2: state="needs-review-translation", state-qualifier="mt-suggestion"; 2.0: the segment's state="translated").
// Inline codes stay: paired ones (1.2's <g>, <mrk>; 2.0's <pc>, <mrk>) around the words they belong to, standalone
// ones (<x/>, <ph>, <bpt>, <sc/>, ...) in place; units marked translate="no" are left alone. Everything else in the
// file (notes, alternatives, skeletons, comments) is kept.
#include "documents/document_format.h"

namespace dragoman::documents {

// read() throws Error("input") for a file that is not XLIFF 1.x or 2.x.
std::unique_ptr<DocumentFormat> xliffFormat();

}  // namespace dragoman::documents
