#include "text/byte_level.h"

#include <vector>

namespace dragoman::byte_level {
namespace {

std::string encodeCodePoint(char32_t c) {
    std::string out;
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else {  // every stand-in lies below U+0800
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
    return out;
}

struct Tables {
    std::array<std::string, 256> byteToChar;
    std::vector<int> charToByte = std::vector<int>(0x200, -1);  // code point -> byte
};

const Tables& tables() {
    static const Tables t = [] {
        Tables t;
        // Printable Latin-1 bytes stand for themselves; the others get code points from U+0100 on, in order.
        auto printable = [](int b) { return (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); };
        char32_t next = 0x100;
        for (int b = 0; b < 256; ++b) {
            const char32_t c = printable(b) ? static_cast<char32_t>(b) : next++;
            t.byteToChar[static_cast<std::size_t>(b)] = encodeCodePoint(c);
            t.charToByte[c] = b;
        }
        return t;
    }();
    return t;
}

}  // namespace

const std::array<std::string, 256>& byteToChar() {
    return tables().byteToChar;
}

std::optional<std::string> toBytes(std::string_view text) {
    const auto& map = tables().charToByte;
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size();) {
        const auto b0 = static_cast<unsigned char>(text[i]);
        char32_t c;
        if (b0 < 0x80) {
            c = b0;
            i += 1;
        } else if ((b0 & 0xE0) == 0xC0 && i + 1 < text.size()) {
            c = (static_cast<char32_t>(b0 & 0x1F) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3F);
            i += 2;
        } else {
            return std::nullopt;  // three- and four-byte characters are never stand-ins
        }
        if (c >= map.size() || map[c] < 0) return std::nullopt;
        out += static_cast<char>(map[c]);
    }
    return out;
}

std::string fromBytes(std::string_view raw) {
    const auto& map = tables().byteToChar;
    std::string out;
    out.reserve(raw.size() * 2);
    for (char b : raw)
        out += map[static_cast<unsigned char>(b)];
    return out;
}

}  // namespace dragoman::byte_level
