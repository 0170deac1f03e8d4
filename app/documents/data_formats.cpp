#include "documents/data_formats.h"

#include "documents/document_files.h"
#include "documents/segmented_document.h"
#include "dragoman.h"

#include <yaml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <functional>
#include <regex>

namespace dragoman::documents {
namespace {

using ordered_json = nlohmann::ordered_json;

// A value to translate: its bytes in the document, its text, and the bytes at the end of its range that stay
// (a YAML block scalar's range runs on to the next token).
struct Value {
    std::size_t begin = 0, end = 0;
    std::string text, keep;
};

using Extract = std::function<std::optional<std::vector<std::string>>(const std::string& translated)>;

// Worth translating: a letter, and not a single token that reads as an identifier, a path, an address or a
// version ("btn_save", "x-42", "com.example.app", "https://...", "a@b.org", "v1.2").
bool isText(const std::string& value) {
    if (!hasLetters(value)) return false;
    if (value.find_first_of(" \t\r\n") != std::string::npos) return true;
    const auto body = value.substr(0, value.find_last_not_of(".!?:") + 1);  // a word's own full stop is text
    return body.find_first_of("0123456789_/@.\\") == std::string::npos;
}

// The value as a double-quoted string, valid in JSON and in YAML (whose escapes are a superset of JSON's).
std::string quoted(const std::string& text) {
    return ordered_json(text).dump(-1, ' ', false, ordered_json::error_handler_t::replace);
}

// A model may wrap its answer in a Markdown code fence.
std::string withoutFence(std::string text) {
    const auto first = text.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return {};
    text.erase(0, first);
    if (text.starts_with("```")) {
        const auto eol = text.find('\n');
        text.erase(0, eol == std::string::npos ? text.size() : eol + 1);
        const auto close = text.rfind("```");
        if (close != std::string::npos) text.erase(close);
    }
    return text;
}

class DataDocument : public ReadDocument {
public:
    DataDocument(std::string format, std::string bom, std::string text, std::vector<Value> values, Extract extract)
        : format_(std::move(format)),
          bom_(std::move(bom)),
          text_(std::move(text)),
          values_(std::move(values)),
          extract_(std::move(extract)) {}

    std::vector<std::string> segments() const override {
        std::vector<std::string> texts;
        for (const auto& v : values_)
            texts.push_back(v.text);
        return texts;
    }
    void write(const QString& output, const std::vector<std::string>& translations) const override {
        std::string out = bom_;
        std::size_t at = 0;
        for (std::size_t i = 0; i < values_.size(); ++i) {
            out.append(text_, at, values_[i].begin - at);
            out += quoted(translations.at(i)) + values_[i].keep;
            at = values_[i].end;
        }
        out.append(text_, at);
        writeAtomically(output, out);
    }
    std::string dataFormat() const override { return format_; }
    std::string dataText() const override { return text_; }
    std::optional<std::vector<std::string>> translationsIn(const std::string& translated) const override {
        auto found = extract_(withoutFence(translated));
        if (found && found->size() != values_.size()) return std::nullopt;
        return found;
    }

private:
    std::string format_, bom_, text_;
    std::vector<Value> values_;
    Extract extract_;
};

// ---- JSON ----

// String tokens of a valid JSON text that are values (not keys) and hold text.
std::vector<Value> jsonValues(const std::string& text) {
    std::vector<Value> values;
    const auto n = text.size();
    for (std::size_t i = 0; i < n;) {
        if (text[i] != '"') {
            ++i;
            continue;
        }
        std::size_t j = i + 1;
        while (j < n && text[j] != '"')
            j += text[j] == '\\' ? 2 : 1;
        const auto end = j + 1;
        auto k = end;
        while (k < n && (text[k] == ' ' || text[k] == '\t' || text[k] == '\r' || text[k] == '\n'))
            ++k;
        if (k >= n || text[k] != ':') {
            auto decoded = ordered_json::parse(text.substr(i, end - i)).get<std::string>();
            if (isText(decoded)) values.push_back({i, end, std::move(decoded), {}});
        }
        i = end;
    }
    return values;
}

// Walks both in document order; false where the translation's shape differs. Text values are collected.
bool sameJsonShape(const ordered_json& source, const ordered_json& translated, std::vector<std::string>& texts) {
    if (source.type() != translated.type()) return false;
    if (source.is_object()) {
        if (source.size() != translated.size()) return false;
        for (auto s = source.begin(), t = translated.begin(); s != source.end(); ++s, ++t)
            if (s.key() != t.key() || !sameJsonShape(*s, *t, texts)) return false;
        return true;
    }
    if (source.is_array()) {
        if (source.size() != translated.size()) return false;
        for (std::size_t i = 0; i < source.size(); ++i)
            if (!sameJsonShape(source[i], translated[i], texts)) return false;
        return true;
    }
    if (source.is_string() && isText(source.get_ref<const std::string&>())) {
        texts.push_back(translated.get<std::string>());
        return true;
    }
    return source == translated;
}

class JsonFormat : public DocumentFormat {
public:
    QString name() const override { return QStringLiteral("JSON"); }
    QStringList suffixes() const override { return {QStringLiteral("json")}; }
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions&) const override {
        auto [bom, text] = readUtf8FileWithoutBom(path);
        ordered_json source;
        try {
            source = ordered_json::parse(text);
        } catch (const ordered_json::exception& e) {
            throw Error("input", path.toStdString() + " is not valid JSON: " + e.what());
        }
        auto values = jsonValues(text);
        auto extract = [source = std::move(source)](const std::string& translated) -> std::optional<std::vector<std::string>> {
            try {
                std::vector<std::string> texts;
                if (!sameJsonShape(source, ordered_json::parse(translated), texts)) return std::nullopt;
                return texts;
            } catch (const ordered_json::exception&) {
                return std::nullopt;
            }
        };
        return std::make_unique<DataDocument>("JSON", bom, text, std::move(values), std::move(extract));
    }
};

// ---- YAML ----

struct YamlNode {
    yaml_event_type_t type{};
    bool key = false;
    bool translatable = false;
    std::string value;  // a scalar's text, an alias's anchor
    std::size_t begin = 0, end = 0;
    bool block = false;  // literal or folded scalar
};

// YAML 1.1's plain words that are not text: booleans and null.
bool isYamlWord(const std::string& text) {
    static const std::vector<std::string> words{"y",  "Y",    "yes",  "Yes",  "YES",   "n",     "N",     "no", "No",
                                                "NO", "true", "True", "TRUE", "false", "False", "FALSE", "on", "On",
                                                "ON", "off",  "Off",  "OFF",  "null",  "Null",  "NULL",  "~"};
    return std::find(words.begin(), words.end(), text) != words.end();
}

// The document's nodes in order, with each scalar's role (mapping key or value) and its bytes; nullopt and a
// reason when it is not YAML.
std::optional<std::vector<YamlNode>> yamlNodes(const std::string& text, std::string* problem) {
    // libyaml's marks count characters: the byte each character starts at.
    std::vector<std::size_t> byteOf;
    for (std::size_t b = 0; b < text.size(); ++b)
        if ((static_cast<unsigned char>(text[b]) & 0xC0) != 0x80) byteOf.push_back(b);
    byteOf.push_back(text.size());
    auto bytes = [&](std::size_t index) { return byteOf[std::min(index, byteOf.size() - 1)]; };

    yaml_parser_t parser;
    if (!yaml_parser_initialize(&parser)) throw Error("memory", "libyaml could not start");
    yaml_parser_set_input_string(&parser, reinterpret_cast<const unsigned char*>(text.data()), text.size());
    struct Level {
        bool mapping, expectKey;
    };
    std::vector<Level> levels;
    std::vector<YamlNode> nodes;
    bool ok = true;
    for (bool done = false; !done;) {
        yaml_event_t event;
        if (!yaml_parser_parse(&parser, &event)) {
            if (problem)
                *problem =
                    std::string(parser.problem ? parser.problem : "malformed") + " at line " + std::to_string(parser.problem_mark.line + 1);
            ok = false;
            break;
        }
        YamlNode node;
        node.type = event.type;
        const bool isNode = event.type == YAML_SCALAR_EVENT || event.type == YAML_MAPPING_START_EVENT ||
                            event.type == YAML_SEQUENCE_START_EVENT || event.type == YAML_ALIAS_EVENT;
        if (isNode && !levels.empty() && levels.back().mapping) {
            node.key = levels.back().expectKey;
            levels.back().expectKey = !node.key;
        }
        if (event.type == YAML_SCALAR_EVENT) {
            const auto& s = event.data.scalar;
            node.value.assign(reinterpret_cast<const char*>(s.value), s.length);
            node.begin = bytes(event.start_mark.index);
            node.end = bytes(event.end_mark.index);
            node.block = s.style == YAML_LITERAL_SCALAR_STYLE || s.style == YAML_FOLDED_SCALAR_STYLE;
            // An anchored or tagged scalar's range starts at its properties, which must stay: left as it is.
            node.translatable =
                !node.key && !s.anchor && !s.tag && isText(node.value) && !(s.style == YAML_PLAIN_SCALAR_STYLE && isYamlWord(node.value));
        } else if (event.type == YAML_ALIAS_EVENT) {
            node.value = reinterpret_cast<const char*>(event.data.alias.anchor);
        } else if (event.type == YAML_MAPPING_START_EVENT) {
            levels.push_back({true, true});
        } else if (event.type == YAML_SEQUENCE_START_EVENT) {
            levels.push_back({false, false});
        } else if ((event.type == YAML_MAPPING_END_EVENT || event.type == YAML_SEQUENCE_END_EVENT) && !levels.empty()) {
            levels.pop_back();
        }
        done = event.type == YAML_STREAM_END_EVENT;
        yaml_event_delete(&event);
        nodes.push_back(std::move(node));
    }
    yaml_parser_delete(&parser);
    if (!ok) return std::nullopt;
    return nodes;
}

class YamlFormat : public DocumentFormat {
public:
    QString name() const override { return QStringLiteral("YAML"); }
    QStringList suffixes() const override { return {QStringLiteral("yaml"), QStringLiteral("yml")}; }
    std::unique_ptr<ReadDocument> read(const QString& path, const ReadOptions&) const override {
        auto [bom, text] = readUtf8FileWithoutBom(path);
        std::string problem;
        auto nodes = yamlNodes(text, &problem);
        if (!nodes) throw Error("input", path.toStdString() + " is not valid YAML: " + problem);
        std::vector<Value> values;
        for (const auto& node : *nodes) {
            if (!node.translatable) continue;
            Value value{node.begin, node.end, node.value, {}};
            if (node.block) {  // the line breaks and blank lines after the block's text stay
                const auto range = std::string_view(text).substr(node.begin, node.end - node.begin);
                const auto last = range.find_last_not_of(" \t\r\n");
                value.keep = std::string(range.substr(last == std::string_view::npos ? range.size() : last + 1));
            }
            values.push_back(std::move(value));
        }
        auto extract = [source = std::move(*nodes)](const std::string& translated) -> std::optional<std::vector<std::string>> {
            const auto copy = yamlNodes(translated, nullptr);
            if (!copy || copy->size() != source.size()) return std::nullopt;
            std::vector<std::string> texts;
            for (std::size_t i = 0; i < source.size(); ++i) {
                const auto &s = source[i], &t = (*copy)[i];
                if (s.type != t.type || s.key != t.key) return std::nullopt;
                if (s.translatable)
                    texts.push_back(t.value);
                else if (s.value != t.value)
                    return std::nullopt;
            }
            return texts;
        };
        return std::make_unique<DataDocument>("YAML", bom, text, std::move(values), std::move(extract));
    }
};

}  // namespace

std::unique_ptr<DocumentFormat> jsonFormat() {
    return std::make_unique<JsonFormat>();
}

std::unique_ptr<DocumentFormat> yamlFormat() {
    return std::make_unique<YamlFormat>();
}

std::vector<std::string> placeholdersIn(std::string_view text) {
    // printf conversions take no space flag: "50% off" is not one. Python's named ones ("%(count)d") and an escaped
    // percent sign ("50%%", which a translation must keep as it is) count too.
    static const std::regex pattern(
        R"(\{\{[^{}]*\}\}|\$\{[^{}]*\}|\{[A-Za-z0-9_.]*\}|%%|%\([A-Za-z0-9_]+\)[-+#0]*(?:[0-9]+|\*)?(?:\.(?:[0-9]+|\*))?[diouxXeEfFgGcrsa]|%(?:[0-9]+\$)?[-+#0]*(?:[0-9]+|\*)?(?:\.(?:[0-9]+|\*))?(?:hh|h|ll|l|L|z|j|t|q)?[diouxXeEfFgGaAcspn@])");
    std::vector<std::string> found;
    const std::string s(text);
    for (auto it = std::sregex_iterator(s.begin(), s.end(), pattern); it != std::sregex_iterator(); ++it)
        found.push_back(it->str());
    return found;
}

bool keepsPlaceholders(std::string_view source, std::string_view translation) {
    auto a = placeholdersIn(source), b = placeholdersIn(translation);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return a == b;
}

}  // namespace dragoman::documents
