#include "documents/inline_markup.h"

#include <cctype>

namespace dragoman::documents {
namespace {

// A tag "<sN>" or "</sN>" at `at`: its length, whether it closes, and N; 0 when there is none.
std::size_t tagAt(std::string_view text, std::size_t at, bool& closes, int& n) {
    auto i = at + 1;
    closes = i < text.size() && text[i] == '/';
    if (closes) ++i;
    if (i >= text.size() || text[i] != 's') return 0;
    ++i;
    const auto digits = i;
    n = 0;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && i - digits < 6)
        n = n * 10 + (text[i++] - '0');
    if (i == digits || i >= text.size() || text[i] != '>') return 0;
    return i + 1 - at;
}

}  // namespace

bool taggable(std::string_view text) {
    for (auto at = text.find('<'); at != std::string_view::npos; at = text.find('<', at + 1)) {
        bool closes = false;
        int n = 0;
        if (tagAt(text, at, closes, n)) return false;
    }
    return true;
}

std::string openTag(int n) {
    return "<s" + std::to_string(n) + ">";
}

std::string closeTag(int n) {
    return "</s" + std::to_string(n) + ">";
}

int spanCount(std::string_view tagged) {
    int most = 0;
    for (auto at = tagged.find('<'); at != std::string_view::npos; at = tagged.find('<', at + 1)) {
        bool closes = false;
        int n = 0;
        if (tagAt(tagged, at, closes, n) && n > most) most = n;
    }
    return most;
}

std::optional<std::vector<MarkedPart>> parseMarked(std::string_view tagged, int spans) {
    std::vector<MarkedPart> parts;
    std::vector<int> open;                                       // the spans open here, innermost last
    std::vector<int> seen(static_cast<std::size_t>(spans) + 1);  // 1: opened, 2: closed
    const auto text = [&](std::string_view words) {
        if (words.empty()) return;
        if (parts.empty() || parts.back().kind != MarkedPart::Kind::Text) parts.push_back({});
        parts.back().text += words;
    };
    std::size_t at = 0;
    while (at < tagged.size()) {
        const auto lt = tagged.find('<', at);
        if (lt == std::string_view::npos) break;
        bool closes = false;
        int n = 0;
        const auto length = tagAt(tagged, lt, closes, n);
        text(tagged.substr(at, lt - at + (length ? 0 : 1)));
        at = lt + (length ? length : 1);
        if (!length) continue;
        if (n < 1 || n > spans) return std::nullopt;
        auto& state = seen[static_cast<std::size_t>(n)];
        if (!closes) {
            if (state != 0) return std::nullopt;
            state = 1;
            open.push_back(n);
            parts.push_back({MarkedPart::Kind::Open, {}, n});
        } else {
            if (state != 1 || open.empty() || open.back() != n) return std::nullopt;
            state = 2;
            open.pop_back();
            parts.push_back({MarkedPart::Kind::Close, {}, n});
        }
    }
    text(tagged.substr(std::min(at, tagged.size())));
    for (int n = 1; n <= spans; ++n)
        if (seen[static_cast<std::size_t>(n)] != 2) return std::nullopt;
    return parts;
}

std::string withoutTags(const std::vector<MarkedPart>& parts) {
    std::string out;
    for (const auto& part : parts)
        out += part.text;
    return out;
}

std::string joinMarked(const std::vector<MarkedPart>& parts) {
    std::string out;
    for (const auto& part : parts)
        out += part.kind == MarkedPart::Kind::Text   ? part.text
               : part.kind == MarkedPart::Kind::Open ? openTag(part.span)
                                                     : closeTag(part.span);
    return out;
}

}  // namespace dragoman::documents
