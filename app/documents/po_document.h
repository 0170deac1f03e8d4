#pragma once
// gettext catalogs (.po, and .pot templates, whose copy is a .po), read and written by libgettextpo: each
// untranslated entry's msgid goes to the model and its translation into msgstr; a plural entry's msgid and
// msgid_plural fill every msgstr[n] the header's Plural-Forms asks for (set from the target language where a
// template leaves it open). Contexts, comments, references and flags stay; what the machine wrote is marked
// fuzzy, since translators review machine output; entries translated already stay as they are unless
// ReadOptions::retranslate. The header gets Language, X-Generator and a UTF-8 charset. Catalogs in another
// charset are refused with the command that converts them.
#include "documents/document_format.h"

#include <string>

namespace dragoman::documents {

std::unique_ptr<DocumentFormat> poFormat();

// "nplurals=2; plural=(n != 1);" and so on for a target language code, from gettext's own table of common
// languages; the Germanic two-form rule for the rest.
std::string pluralFormsFor(const std::string& language);

}  // namespace dragoman::documents
