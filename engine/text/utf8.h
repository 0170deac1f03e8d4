#pragma once
// UTF-8 checks and repair shared by the tokenizers.
#include <string>
#include <string_view>

namespace dragoman::utf8 {

bool isValid(std::string_view bytes);
// Decodes bytes as Rust's String::from_utf8_lossy (and Python's errors="replace"): each maximal invalid
// subpart becomes one U+FFFD.
std::string lossy(std::string_view bytes);

}  // namespace dragoman::utf8
