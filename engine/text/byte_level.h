#pragma once
// GPT-2's reversible map between bytes and printable characters, in which byte-level BPE vocabularies
// (tokenizers' ByteLevel pre-tokenizer and decoder) are written.
#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace dragoman::byte_level {

// The UTF-8 spelling of the stand-in character of each byte.
const std::array<std::string, 256>& byteToChar();
// The bytes `text` stands for, or nullopt when some character is not a byte stand-in.
std::optional<std::string> toBytes(std::string_view text);
// Every byte of `raw` replaced by its stand-in.
std::string fromBytes(std::string_view raw);

}  // namespace dragoman::byte_level
