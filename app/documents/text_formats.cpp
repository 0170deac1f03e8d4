#include "documents/text_formats.h"

#include "documents/markdown_inline.h"
#include "documents/marked_run.h"

#include <QRegularExpression>
#include <QString>

#include <algorithm>
#include <cctype>
#include <vector>

namespace dragoman::documents {
namespace {

// Lines with their line endings ("\n" or "\r\n"), so the rebuilt file keeps them.
struct Line {
    std::string_view text, ending;
};

std::vector<Line> splitLines(std::string_view text) {
    std::vector<Line> lines;
    std::size_t at = 0;
    while (at < text.size()) {
        auto end = text.find('\n', at);
        std::string_view ending = "\n";
        if (end == std::string_view::npos) {
            end = text.size();
            ending = {};
        }
        auto body = text.substr(at, end - at);
        if (!body.empty() && body.back() == '\r') {
            body.remove_suffix(1);
            ending = ending.empty() ? std::string_view("\r") : std::string_view("\r\n");
        }
        lines.push_back({body, ending});
        at = end + 1;
    }
    return lines;
}

bool isBlank(std::string_view s) {
    return s.find_first_not_of(" \t") == std::string_view::npos;
}

std::string_view trimmed(std::string_view s) {
    const auto b = s.find_first_not_of(" \t");
    if (b == std::string_view::npos) return {};
    return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// A hard-wrapped line continues into the next one: it is long and does not end a sentence or a clause.
bool wrapsOnto(std::string_view line, std::string_view next) {
    const auto t = trimmed(line);
    if (t.size() < 50 || isBlank(next)) return false;
    static const std::string_view enders[] = {".", "!", "?", ":", ";", "。", "！", "？", "：", "；", "\"", "»", ")"};
    for (auto e : enders)
        if (t.ends_with(e)) return false;
    const auto n = trimmed(next);
    return !(n.starts_with("- ") || n.starts_with("* ") || n.starts_with("• ") ||
             (!n.empty() && std::isdigit(static_cast<unsigned char>(n[0]))));
}

// The prefix of a Markdown line that is structure, not text: indentation, quote markers, a heading's hashes,
// a list marker and a task box.
std::size_t markdownPrefixLength(std::string_view line) {
    static const QRegularExpression prefix(
        QStringLiteral(R"(^[ \t]*(?:>[ \t]?)*(?:#{1,6}[ \t]+|(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?)?)"));
    const auto text = QString::fromUtf8(line.data(), static_cast<qsizetype>(line.size()));
    const auto match = prefix.match(text);
    return static_cast<std::size_t>(match.captured(0).toUtf8().size());
}

// An HTML block in Markdown starts with a comment or a block-level tag (inline tags start a paragraph).
bool startsHtmlBlock(std::string_view t) {
    static const QRegularExpression block(
        QStringLiteral(
            R"(^<(?:!--|/?(?:address|article|aside|blockquote|details|dialog|div|dl|fieldset|figcaption|figure|footer|form|h[1-6]|)"
            R"(header|hr|iframe|li|nav|ol|p|pre|script|section|style|summary|table|tbody|td|tfoot|th|thead|tr|ul)(?:[\s/>]|$)))"),
        QRegularExpression::CaseInsensitiveOption);
    return block.match(QString::fromUtf8(t.data(), static_cast<qsizetype>(t.size()))).hasMatch();
}

// A reference-style link definition, "[id]: https://... "title"": no prose.
bool isLinkDefinition(std::string_view t) {
    static const QRegularExpression definition(QStringLiteral(R"(^\[[^\]]+\]:\s*\S+)"));
    return definition.match(QString::fromUtf8(t.data(), static_cast<qsizetype>(t.size()))).hasMatch();
}

bool isTableSeparator(std::string_view t) {
    return t.find('-') != std::string_view::npos && t.find_first_not_of("|:- \t") == std::string_view::npos;
}

// The next line is more of the same paragraph: not blank, no block marker of its own (heading, list, quote,
// table, fence, HTML, rule or setext underline), and this line does not end in a hard break.
bool continuesParagraph(std::string_view line, std::string_view next) {
    const auto t = trimmed(next);
    if (t.empty() || line.ends_with("  ") || line.ends_with("\\")) return false;
    const auto indent = next.find_first_not_of(" \t");
    if (markdownPrefixLength(next) != indent) return false;
    static const std::string_view starts[] = {"|", "```", "~~~", "<", "===", "---", "***", "___"};
    for (auto s : starts)
        if (t.starts_with(s)) return false;
    return !isTableSeparator(t);
}

}  // namespace

SegmentedDocument segmentPlainText(std::string_view text) {
    SegmentWriter out;
    const auto lines = splitLines(text);
    for (std::size_t i = 0; i < lines.size(); ++i) {
        // A paragraph: this line and the lines it wraps onto, translated as one and written as one line.
        std::string paragraph(lines[i].text);
        while (i + 1 < lines.size() && wrapsOnto(lines[i].text, lines[i + 1].text)) {
            ++i;
            paragraph += " ";
            paragraph += trimmed(lines[i].text);
        }
        out.segment(paragraph);
        out.literal(lines[i].ending);
    }
    return out.finish();
}

SegmentedDocument segmentMarkdown(std::string_view text) {
    SegmentWriter out;
    const auto lines = splitLines(text);
    std::size_t i = 0;
    // Front matter at the very top stays as it is: YAML between "---" lines, TOML between "+++" lines (Hugo).
    if (!lines.empty() && (trimmed(lines[0].text) == "---" || trimmed(lines[0].text) == "+++")) {
        const bool toml = trimmed(lines[0].text) == "+++";
        std::size_t end = 1;
        while (end < lines.size() && trimmed(lines[end].text) != (toml ? "+++" : "---") && (toml || trimmed(lines[end].text) != "..."))
            ++end;
        if (end < lines.size())
            for (; i <= end; ++i) {
                out.literal(lines[i].text);
                out.literal(lines[i].ending);
            }
    }
    std::string_view fence;  // the opening fence of a code block we are in
    bool htmlBlock = false, previousBlank = true;
    bool inTable = false;  // a pipe table's rows, which need not start with "|" (GFM): from its header to a blank line
    for (; i < lines.size(); ++i) {
        const auto line = lines[i].text;
        const auto t = trimmed(line);
        auto keep = [&] {
            out.literal(line);
            out.literal(lines[i].ending);
        };
        if (!fence.empty()) {  // inside a fenced code block
            keep();
            if (t.starts_with(fence) && trimmed(t.substr(fence.size())).empty()) fence = {};
            continue;
        }
        if (t.starts_with("```") || t.starts_with("~~~")) {
            fence = t.substr(0, t.find_first_not_of(t[0]));
            keep();
            continue;
        }
        if (htmlBlock || (previousBlank && startsHtmlBlock(t))) {  // an HTML block, to a blank line
            htmlBlock = !t.empty();
            keep();
            previousBlank = t.empty();
            continue;
        }
        const bool indentedCode = previousBlank && (line.starts_with("    ") || line.starts_with("\t")) && !t.empty();
        if (t.find('|') == std::string_view::npos)
            inTable = false;
        else if (i + 1 < lines.size() && isTableSeparator(trimmed(lines[i + 1].text)) &&
                 lines[i + 1].text.find('|') != std::string_view::npos)
            inTable = true;  // a header row: the next line is the table's separator (a "---" alone underlines a heading)
        if (t.empty() || indentedCode || isLinkDefinition(t) || isTableSeparator(t) || t == "***" || t == "---" || t == "___") {
            keep();
            previousBlank = t.empty() || (indentedCode && previousBlank);
            continue;
        }
        previousBlank = false;
        if (t.starts_with("|") || inTable) {  // a table row: each cell's text
            std::size_t at = 0;
            while (at < line.size()) {
                const auto bar = line.find('|', at);
                const auto cell = line.substr(at, (bar == std::string_view::npos ? line.size() : bar) - at);
                writeMarkdownInline(out, cell);
                if (bar == std::string_view::npos) break;
                out.literal("|");
                at = bar + 1;
            }
            out.literal(lines[i].ending);
            continue;
        }
        const auto prefix = markdownPrefixLength(line);
        out.literal(line.substr(0, prefix));
        std::string paragraph(line.substr(prefix));
        // Soft-wrapped paragraph lines (not a new block) are one paragraph in Markdown: joined, one line out.
        const bool heading = line.substr(0, prefix).find('#') != std::string_view::npos;
        while (!heading && i + 1 < lines.size() && continuesParagraph(lines[i].text, lines[i + 1].text)) {
            ++i;
            paragraph += " ";
            paragraph += trimmed(lines[i].text);
        }
        writeMarkdownInline(out, paragraph);
        out.literal(lines[i].ending);
    }
    return out.finish();
}

}  // namespace dragoman::documents

namespace dragoman::documents {
namespace {

// Splits a translated cue back onto `count` lines at the spaces nearest equal lengths (text without spaces,
// such as Chinese, stays on one line).
std::string wrapOnto(const std::string& text, std::size_t count, std::string_view ending) {
    if (count <= 1) return text;
    const auto decoded = QString::fromUtf8(text.data(), static_cast<qsizetype>(text.size()));
    QStringList lines;
    QString rest = decoded;
    for (std::size_t left = count; left > 1 && !rest.isEmpty(); --left) {
        const auto target = rest.size() / static_cast<qsizetype>(left);
        qsizetype best = -1;
        for (qsizetype j = 0; j < rest.size(); ++j)
            if (rest[j] == ' ' && (best < 0 || std::abs(j - target) < std::abs(best - target))) best = j;
        if (best <= 0) break;
        lines << rest.left(best);
        rest = rest.mid(best + 1);
    }
    lines << rest;
    return lines.join(QString::fromUtf8(ending.data(), static_cast<qsizetype>(ending.size()))).toStdString();
}

// Tags inside cue text (<i>, <b>, <font ...>, {\an8}) stay as they are.
std::pair<std::size_t, std::size_t> cueTag(std::string_view text, std::size_t from) {
    for (auto at = from; at < text.size(); ++at) {
        const char close = text[at] == '<' ? '>' : text[at] == '{' ? '}' : 0;
        if (!close) continue;
        const auto end = text.find(close, at);
        if (end != std::string_view::npos) return {at, end + 1};
    }
    return {std::string_view::npos, std::string_view::npos};
}

// The dash that opens a speaker's line in a dialogue cue ("- Where to?", "– To the market."), with the spaces after
// it; 0 where the line opens with none.
std::size_t dialogueDash(std::string_view line) {
    line = trimmed(line);
    std::size_t dash = 0;
    for (const std::string_view mark : {"-", "\u2013", "\u2014"})
        if (line.starts_with(mark) && !line.starts_with("-->")) dash = mark.size();
    if (dash == 0 || (line.size() > dash && line[dash] == '-')) return 0;  // "--" is not a speaker's dash
    while (dash < line.size() && line[dash] == ' ')
        ++dash;
    return dash;
}

}  // namespace

SegmentedDocument segmentSubtitles(std::string_view text) {
    SegmentWriter out;
    const auto lines = splitLines(text);
    std::size_t i = 0;
    while (i < lines.size()) {
        if (isBlank(lines[i].text)) {
            out.literal(lines[i].text);
            out.literal(lines[i].ending);
            ++i;
            continue;
        }
        auto end = i;
        while (end < lines.size() && !isBlank(lines[end].text))
            ++end;
        std::size_t timing = end;
        for (auto j = i; j < end && timing == end; ++j)
            if (lines[j].text.find("-->") != std::string_view::npos) timing = j;
        const auto first = trimmed(lines[i].text);
        const bool header =
            first.starts_with("WEBVTT") || first.starts_with("NOTE") || first.starts_with("STYLE") || first.starts_with("REGION");
        const bool keepBlock = timing == end || header;
        if (timing == end && !header) {
            bool letters = false;
            for (auto j = i; j < end && !letters; ++j)
                letters = hasLetters(lines[j].text);
            if (letters)
                out.keptAsIs("line " + std::to_string(i + 1) + ": a subtitle block without a timing line (\"-->\") is kept untranslated");
        }
        const auto textBegin = keepBlock ? end : timing + 1;
        for (auto j = i; j < textBegin; ++j) {
            out.literal(lines[j].text);
            out.literal(lines[j].ending);
        }
        if (textBegin < end) {
            bool tagged = false, dialogue = false;
            std::string cue;
            for (auto j = textBegin; j < end; ++j) {
                tagged = tagged || cueTag(lines[j].text, 0).first != std::string_view::npos;
                dialogue = dialogue || (j > textBegin && dialogueDash(lines[j].text) > 0);
                cue += (cue.empty() ? "" : " ") + std::string(trimmed(lines[j].text));
            }
            if (dialogue && !tagged) {  // two speakers: each line their own sentence, after its dash
                for (auto j = textBegin; j < end; ++j) {
                    const auto line = lines[j].text;  // not blank: a blank line ends the cue
                    const auto start = line.find_first_not_of(" \t");
                    const auto dash = start + dialogueDash(line);
                    out.literal(line.substr(0, dash));
                    const auto last = line.find_last_not_of(" \t") + 1;
                    out.segment(line.substr(dash, last > dash ? last - dash : 0));
                    out.literal(line.substr(std::max(last, dash)));
                    out.literal(lines[j].ending);
                }
            } else if (tagged) {  // line by line around the tags
                for (auto j = textBegin; j < end; ++j) {
                    writeWithProtectedSpans(out, lines[j].text, cueTag);
                    out.literal(lines[j].ending);
                }
            } else {  // the cue as one sentence, wrapped back onto its lines
                const auto ending = std::string(lines[textBegin].ending.empty() ? std::string_view("\n") : lines[textBegin].ending);
                const auto count = end - textBegin;
                out.segment(cue, [count, ending](const std::string& t) { return wrapOnto(t, count, ending); });
                out.literal(lines[end - 1].ending);
            }
        }
        i = end;
    }
    return out.finish();
}

namespace {

std::string lower(std::string_view s) {
    std::string out(s);
    std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
}

// The end of the tag that starts at `at` ('<'), past quoted attribute values; npos when it never ends.
std::size_t tagEnd(std::string_view text, std::size_t at) {
    char quote = 0;
    for (auto i = at + 1; i < text.size(); ++i) {
        const char c = text[i];
        if (quote) {
            if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
            quote = c;
        } else if (c == '>') {
            return i + 1;
        }
    }
    return std::string_view::npos;
}

std::string tagName(std::string_view tag) {
    std::size_t b = 1;
    if (b < tag.size() && tag[b] == '/') ++b;
    auto e = b;
    while (e < tag.size() && (std::isalnum(static_cast<unsigned char>(tag[e])) || tag[e] == '-'))
        ++e;
    return lower(tag.substr(b, e - b));
}

std::string decodeEntities(std::string_view text) {
    static const std::pair<std::string_view, std::string_view> named[] = {
        {"amp", "&"},   {"lt", "<"},    {"gt", ">"},    {"quot", "\""},  {"apos", "'"},   {"nbsp", "\u00A0"},
        {"copy", "©"},  {"reg", "®"},   {"trade", "™"}, {"mdash", "—"},  {"ndash", "–"},  {"hellip", "…"},
        {"laquo", "«"}, {"raquo", "»"}, {"lsquo", "‘"}, {"rsquo", "’"},  {"ldquo", "“"},  {"rdquo", "”"},
        {"euro", "€"},  {"pound", "£"}, {"deg", "°"},   {"eacute", "é"}, {"egrave", "è"}, {"agrave", "à"},
        {"uuml", "ü"},  {"ouml", "ö"},  {"auml", "ä"},  {"szlig", "ß"},  {"ccedil", "ç"}, {"middot", "·"}};
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const auto semi = text[i] == '&' ? text.find(';', i) : std::string_view::npos;
        if (semi == std::string_view::npos || semi - i > 10) {
            out += text[i];
            continue;
        }
        const auto name = text.substr(i + 1, semi - i - 1);
        std::string decoded;
        if (name.starts_with("#")) {
            bool ok = false;
            const auto code = name.size() > 1 && (name[1] == 'x' || name[1] == 'X') ? QString::fromLatin1(name.substr(2)).toUInt(&ok, 16)
                                                                                    : QString::fromLatin1(name.substr(1)).toUInt(&ok, 10);
            if (ok && code > 0 && code <= 0x10FFFF && !(code >= 0xD800 && code <= 0xDFFF))
                decoded = QString::fromUcs4(reinterpret_cast<const char32_t*>(&code), 1).toStdString();
        } else {
            for (const auto& [n, v] : named)
                if (n == name) decoded = v;
        }
        if (decoded.empty()) {
            out += text[i];  // unknown: left as written
            continue;
        }
        out += decoded;
        i = semi;
    }
    return out;
}

// Whether an entity reference ("&rarr;", "&#8594;", "&#x2192;") starts at `at`: decodeEntities() leaves the ones
// it does not know as written, and they stay so.
bool entityAt(const std::string& text, std::size_t at) {
    auto i = at + 1;
    const bool numeric = i < text.size() && text[i] == '#';
    const bool hex = numeric && i + 1 < text.size() && (text[i + 1] == 'x' || text[i + 1] == 'X');
    i += numeric ? (hex ? 2 : 1) : 0;
    const auto start = i;
    while (i < text.size() && i - start < 32 &&
           (hex       ? std::isxdigit(static_cast<unsigned char>(text[i]))
            : numeric ? std::isdigit(static_cast<unsigned char>(text[i]))
                      : std::isalnum(static_cast<unsigned char>(text[i]))))
        ++i;
    return i > start && i < text.size() && text[i] == ';' && (numeric || std::isalpha(static_cast<unsigned char>(text[start])));
}

// The translation as HTML text. Its sources were decoded (decodeEntities), so "&amp;" in it is the text "&amp;" (the
// source said "&amp;amp;") and is escaped; only a reference decodeEntities leaves as written came through as one.
std::string escapeHtml(const std::string& text) {
    std::string out;
    for (std::size_t at = 0; at < text.size(); ++at) {
        const char c = text[at];
        const auto reference = c == '&' && entityAt(text, at) ? std::string_view(text).substr(at, text.find(';', at) - at + 1) : "";
        if (!reference.empty() && decodeEntities(reference) == reference)
            out += c;
        else if (c == '&')
            out += "&amp;";
        else if (c == '<')
            out += "&lt;";
        else if (c == '>')
            out += "&gt;";
        else
            out += c;
    }
    return out;
}

// <html lang="xx"> (and xml:lang) name the target language in the translated copy.
std::string withLanguage(std::string_view tag, const std::string& language) {
    static const QRegularExpression lang(QStringLiteral(R"(((?:\s|xml:)lang\s*=\s*)(["'])[^"']*\2)"),
                                         QRegularExpression::CaseInsensitiveOption);
    auto text = QString::fromUtf8(tag.data(), static_cast<qsizetype>(tag.size()));
    text.replace(lang, QStringLiteral("\\1\\2") + QString::fromStdString(language) + QStringLiteral("\\2"));
    return text.toStdString();
}

// A tag as written, but for the human-readable attribute values (alt, title, placeholder, aria-label), which
// are translated like text.
void writeTagWithAttributes(SegmentWriter& out, std::string_view tag) {
    static const QRegularExpression readable(QStringLiteral(R"(\s(?:alt|title|placeholder|aria-label)\s*=\s*(["'])(.*?)\1)"),
                                             QRegularExpression::CaseInsensitiveOption);
    const auto text = QString::fromUtf8(tag.data(), static_cast<qsizetype>(tag.size()));
    qsizetype at = 0;
    for (auto it = readable.globalMatch(text); it.hasNext();) {
        const auto match = it.next();
        const char quote = match.captured(1).at(0).toLatin1();
        out.literal(text.mid(at, match.capturedStart(2) - at).toStdString());
        out.segment(decodeEntities(match.captured(2).toStdString()), [quote](const std::string& t) {
            auto escaped = escapeHtml(t);
            const std::string entity = quote == '"' ? "&quot;" : "&#39;";
            for (auto p = escaped.find(quote); p != std::string::npos; p = escaped.find(quote, p + entity.size()))
                escaped.replace(p, 1, entity);
            return escaped;
        });
        at = match.capturedEnd(2);
    }
    out.literal(text.mid(at).toStdString());
}

}  // namespace

namespace {

// Inline elements: inside a paragraph's sentence, their text is part of it (a span of the segment).
bool isInlineElement(const std::string& name) {
    static const char* const names[] = {"a",     "abbr", "b",      "bdi",    "bdo", "big",   "cite", "data", "del",
                                        "dfn",   "em",   "font",   "i",      "ins", "label", "mark", "q",    "s",
                                        "small", "span", "strike", "strong", "sub", "sup",   "time", "tt",   "u"};
    for (const auto* n : names)
        if (name == n) return true;
    return false;
}

bool isVoidInline(const std::string& name) {
    return name == "br" || name == "wbr" || name == "img";
}

bool hasReadableAttribute(std::string_view tag) {
    static const QRegularExpression readable(QStringLiteral(R"(\s(?:alt|title|placeholder|aria-label)\s*=)"),
                                             QRegularExpression::CaseInsensitiveOption);
    return readable.match(QString::fromUtf8(tag.data(), static_cast<qsizetype>(tag.size()))).hasMatch();
}

// Whitespace runs (line breaks of the source's layout included) read as one space.
std::string collapseWhitespace(std::string_view text) {
    std::string out;
    bool space = false;
    for (const char c : text) {
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
            space = true;
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
    }
    if (space) out += ' ';
    return out;
}

// The text and inline elements between two block boundaries, as one segment; the whitespace around it stays as
// written.
class HtmlRun {
public:
    explicit HtmlRun(SegmentWriter& out) : out_(out) {}
    void text(std::string_view raw) {
        const auto lead = raw.find_first_not_of(" \t\r\n");
        if (lead == std::string_view::npos) {
            if (run_.empty())
                out_.literal(raw);
            else
                trail_ += raw;
            return;
        }
        const auto tail = raw.find_last_not_of(" \t\r\n") + 1;
        if (run_.empty()) {
            out_.literal(raw.substr(0, lead));
        } else if (lead > 0 || !trail_.empty()) {
            run_.text(" ");
            raw_ += trail_;
            raw_ += raw.substr(0, lead);
        }
        trail_.clear();
        const auto words = decodeEntities(raw.substr(lead, tail - lead));
        letters_ = letters_ || hasLetters(words);
        run_.text(collapseWhitespace(words));
        raw_ += raw.substr(lead, tail - lead);
        trail_ = std::string(raw.substr(tail));
    }
    void open(std::string tag, std::string name) {
        settle(tag);
        run_.open(std::move(tag), std::move(name));
    }
    void close(std::string tag, std::string name) {
        settle(tag);
        run_.close(std::move(tag), std::move(name));
    }
    void code(std::string markup) {
        settle(markup);
        run_.code(std::move(markup));
    }
    // A block boundary: the run so far becomes its segment; one without words stays exactly as written.
    void end() {
        if (letters_)
            run_.writeTo(out_, escapeHtml);
        else
            out_.literal(raw_);
        run_ = MarkedRun();
        out_.literal(trail_);
        trail_.clear();
        raw_.clear();
        letters_ = false;
    }

private:
    // Whitespace between the words and the next inline element is one space of the sentence.
    void settle(const std::string& markup) {
        if (!trail_.empty() && !run_.empty()) {
            run_.text(" ");
            raw_ += trail_;
        }
        if (run_.empty()) out_.literal(trail_);
        trail_.clear();
        raw_ += markup;
    }

    SegmentWriter& out_;
    MarkedRun run_;
    std::string trail_;  // whitespace after the last words, as written
    std::string raw_;    // the run as written
    bool letters_ = false;
};

}  // namespace

SegmentedDocument segmentHtml(std::string_view text, const std::string& targetLanguage) {
    SegmentWriter out;
    HtmlRun run(out);
    std::size_t at = 0;
    const auto rawText = [](const std::string& name) {
        return name == "script" || name == "style" || name == "pre" || name == "code" || name == "textarea" || name == "svg" ||
               name == "math";
    };
    while (at < text.size()) {
        if (text.substr(at).starts_with("<!--")) {
            const auto end = text.find("-->", at + 4);
            const auto stop = end == std::string_view::npos ? text.size() : end + 3;
            run.end();
            out.literal(text.substr(at, stop - at));
            at = stop;
            continue;
        }
        if (text[at] == '<' && at + 1 < text.size() &&
            (std::isalpha(static_cast<unsigned char>(text[at + 1])) || text[at + 1] == '/' || text[at + 1] == '!' || text[at + 1] == '?')) {
            const auto end = tagEnd(text, at);
            if (end == std::string_view::npos) {  // an unterminated tag: the rest is kept as it is
                run.end();
                out.literal(text.substr(at));
                break;
            }
            const auto tag = text.substr(at, end - at);
            const auto name = tagName(tag);
            const bool closing = tag[1] == '/';
            if (name == "html" && !closing) {
                run.end();
                out.literal(withLanguage(tag, targetLanguage));
                at = end;
                continue;
            }
            if (rawText(name) && !closing && !tag.ends_with("/>")) {  // verbatim up to its closing tag
                const auto haystack = lower(text.substr(end));
                const auto close = haystack.find("</" + name);
                const auto closeEnd = close == std::string::npos ? std::string_view::npos : tagEnd(text, end + close);
                const auto stop = closeEnd == std::string_view::npos ? text.size() : closeEnd;
                if (name == "code")  // inline code stays in its sentence, untranslated
                    run.code(std::string(text.substr(at, stop - at)));
                else {
                    run.end();
                    out.literal(text.substr(at, stop - at));
                }
                at = stop;
                continue;
            }
            if (hasReadableAttribute(tag) || !(isInlineElement(name) || isVoidInline(name))) {  // a block boundary
                run.end();
                writeTagWithAttributes(out, tag);
            } else if (isVoidInline(name) || tag.ends_with("/>")) {
                run.code(std::string(tag));
            } else if (closing) {
                run.close(std::string(tag), name);
            } else {
                run.open(std::string(tag), name);
            }
            at = end;
            continue;
        }
        auto next = text.find('<', at + 1);
        if (next == std::string_view::npos) next = text.size();
        run.text(text.substr(at, next - at));
        at = next;
    }
    run.end();
    return out.finish();
}

}  // namespace dragoman::documents
