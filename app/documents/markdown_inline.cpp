#include "documents/markdown_inline.h"

#include "documents/marked_run.h"

#include <cctype>
#include <map>
#include <string>

namespace dragoman::documents {
namespace {

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool isWordByte(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || (static_cast<unsigned char>(c) & 0x80);
}

bool isVoidElement(const std::string& name) {
    static const char* const voids[] = {"br", "img", "hr", "wbr", "input", "area", "col", "embed", "source", "track"};
    for (const auto* v : voids)
        if (name == v) return true;
    return false;
}

class Scanner {
public:
    explicit Scanner(std::string_view text) : text_(text) {}

    void run(SegmentWriter& out) {
        std::size_t at = 0;
        while (at < text_.size()) {
            if (const auto length = markupAt(at)) {
                at += length;
                plain_ = at;
            } else {
                at += text_[at] == '\\' && at + 1 < text_.size() ? 2 : 1;  // a backslash escape stays with its character
            }
        }
        flush(text_.size());
        run_.writeTo(out);
    }

private:
    // The words before markup at `at` go to the run first.
    void flush(std::size_t at) { run_.text(text_.substr(plain_, at - plain_)); }

    // Hands the markup at `at` to the run and returns its length; 0 for a character of prose.
    std::size_t markupAt(std::size_t at) {
        if (const auto pending = linkEnds_.find(at); pending != linkEnds_.end()) {
            const auto markup = std::string(text_.substr(at, pending->second));
            linkEnds_.erase(pending);
            flush(at);
            run_.close(markup, "]");
            return markup.size();
        }
        const char c = text_[at];
        if (c == '`') return codeSpan(at);
        if (c == '[' || (c == '!' && at + 1 < text_.size() && text_[at + 1] == '[')) return linkStart(at);
        if (c == '<') return htmlTag(at);
        if (c == 'h' && (text_.substr(at).starts_with("https://") || text_.substr(at).starts_with("http://"))) return bareUrl(at);
        if (c == '*' || c == '_' || c == '~') return emphasis(at);
        return 0;
    }

    std::size_t codeSpan(std::size_t at) {
        auto ticks = at;
        while (ticks < text_.size() && text_[ticks] == '`')
            ++ticks;
        const auto fence = text_.substr(at, ticks - at);
        for (auto close = text_.find(fence, ticks); close != std::string_view::npos; close = text_.find(fence, close + fence.size())) {
            const auto end = close + fence.size();
            if (end < text_.size() && text_[end] == '`') continue;  // a longer run of backticks
            flush(at);
            run_.code(std::string(text_.substr(at, end - at)));
            return end - at;
        }
        return 0;
    }

    // "[" or "![" whose "](target)" follows: the text between is a span; the target is markup.
    std::size_t linkStart(std::size_t at) {
        const auto bracket = text_[at] == '!' ? at + 1 : at;
        const auto close = text_.find(']', bracket + 1);
        if (close == std::string_view::npos || close + 1 >= text_.size() || text_[close + 1] != '(') return 0;
        if (text_.substr(bracket + 1, close - bracket - 1).find('[') != std::string_view::npos) return 0;
        const auto paren = text_.find(')', close + 2);
        if (paren == std::string_view::npos) return 0;
        linkEnds_[close] = paren + 1 - close;
        flush(at);
        run_.open(std::string(text_.substr(at, bracket + 1 - at)), "]");
        return bracket + 1 - at;
    }

    std::size_t htmlTag(std::size_t at) {
        const auto end = text_.find('>', at);
        if (end == std::string_view::npos || at + 1 >= text_.size()) return 0;
        const auto tag = std::string(text_.substr(at, end + 1 - at));
        const bool closing = tag[1] == '/';
        const auto nameStart = closing ? 2u : 1u;
        if (nameStart >= tag.size() || !(std::isalpha(static_cast<unsigned char>(tag[nameStart])) || tag[nameStart] == '!')) return 0;
        std::string name;
        for (auto i = nameStart; i < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[i])) || tag[i] == '-'); ++i)
            name += static_cast<char>(std::tolower(static_cast<unsigned char>(tag[i])));
        const bool autolink =
            tag.find("://") != std::string::npos || (tag.find('@') != std::string::npos && tag.find(' ') == std::string::npos);
        flush(at);
        if (autolink || name.empty() || isVoidElement(name) || tag.ends_with("/>"))
            run_.code(tag);
        else if (closing)
            run_.close(tag, name);
        else
            run_.open(tag, name);
        return tag.size();
    }

    std::size_t bareUrl(std::size_t at) {
        auto end = at;
        while (end < text_.size() && !isSpace(text_[end]) && text_[end] != ')' && text_[end] != '>')
            ++end;
        // A sentence's full stop or comma after a URL is prose.
        while (end > at && (text_[end - 1] == '.' || text_[end - 1] == ',' || text_[end - 1] == ';' || text_[end - 1] == ':'))
            --end;
        flush(at);
        run_.code(std::string(text_.substr(at, end - at)));
        return end - at;
    }

    std::size_t emphasis(std::size_t at) {
        const char c = text_[at];
        auto end = at;
        while (end < text_.size() && text_[end] == c)
            ++end;
        if (c == '~' && end - at != 2) return 0;
        if (end - at > 3) return 0;
        const char prev = at > 0 ? text_[at - 1] : ' ';
        const char next = end < text_.size() ? text_[end] : ' ';
        // CommonMark's flanking rules, simplified: an opener is followed by a non-space, a closer preceded by one;
        // an underscore inside a word (snake_case) is neither.
        const bool canOpen = !isSpace(next) && (c != '_' || !isWordByte(prev));
        const bool canClose = !isSpace(prev) && at > 0 && (c != '_' || !isWordByte(next));
        if (!canOpen && !canClose) return 0;
        flush(at);
        run_.delimiter(std::string(text_.substr(at, end - at)), canOpen, canClose);
        return end - at;
    }

    std::string_view text_;
    MarkedRun run_;
    std::map<std::size_t, std::size_t> linkEnds_;  // where a link's "](target)" starts -> its length
    std::size_t plain_ = 0;                        // where the words not yet handed to the run start
};

}  // namespace

void writeMarkdownInline(SegmentWriter& out, std::string_view text) {
    Scanner(text).run(out);
}

}  // namespace dragoman::documents
