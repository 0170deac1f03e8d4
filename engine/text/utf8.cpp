#include "text/utf8.h"

#include "dragoman.h"

namespace dragoman::utf8 {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";

// Length of the valid sequence at `at`, or 0 with `maximalSubpart` set to how many bytes form the invalid
// prefix that must be replaced as one unit (Unicode's "maximal subpart" rule, Table 3-7 well-formedness).
std::size_t validSequence(std::string_view s, std::size_t at, std::size_t& maximalSubpart) {
    const auto b0 = static_cast<unsigned char>(s[at]);
    maximalSubpart = 1;
    if (b0 < 0x80) return 1;
    std::size_t need;
    unsigned char lo = 0x80, hi = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF)
        need = 1;
    else if (b0 == 0xE0)
        need = 2, lo = 0xA0;
    else if (b0 >= 0xE1 && b0 <= 0xEC)
        need = 2;
    else if (b0 == 0xED)
        need = 2, hi = 0x9F;
    else if (b0 >= 0xEE && b0 <= 0xEF)
        need = 2;
    else if (b0 == 0xF0)
        need = 3, lo = 0x90;
    else if (b0 >= 0xF1 && b0 <= 0xF3)
        need = 3;
    else if (b0 == 0xF4)
        need = 3, hi = 0x8F;
    else
        return 0;
    for (std::size_t k = 1; k <= need; ++k) {
        if (at + k >= s.size()) return 0;
        const auto b = static_cast<unsigned char>(s[at + k]);
        const bool ok = k == 1 ? (b >= lo && b <= hi) : (b >= 0x80 && b <= 0xBF);
        if (!ok) return 0;
        maximalSubpart = k + 1;
    }
    return need + 1;
}

}  // namespace

bool isValid(std::string_view bytes) {
    for (std::size_t i = 0; i < bytes.size();) {
        std::size_t subpart = 0;
        const auto n = validSequence(bytes, i, subpart);
        if (n == 0) return false;
        i += n;
    }
    return true;
}

std::string lossy(std::string_view bytes) {
    std::string out;
    out.reserve(bytes.size());
    for (std::size_t i = 0; i < bytes.size();) {
        std::size_t subpart = 0;
        if (const auto n = validSequence(bytes, i, subpart); n > 0) {
            out.append(bytes.substr(i, n));
            i += n;
        } else {
            out.append(kReplacement);
            i += subpart;
        }
    }
    return out;
}

}  // namespace dragoman::utf8

namespace dragoman {

bool isValidUtf8(std::string_view text) {
    return utf8::isValid(text);
}

}  // namespace dragoman
