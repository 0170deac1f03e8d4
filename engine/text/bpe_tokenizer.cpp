#include "text/bpe_tokenizer.h"

#include "io/mapped_file.h"
#include "text/byte_level.h"
#include "text/utf8.h"
#include "util/error.h"
#include "util/log.h"
#include "util/paths.h"

#include <fmt/format.h>
#include <simdjson.h>
#include <unicode/normalizer2.h>
#include <unicode/uchar.h>
#include <unicode/unistr.h>
#include <unicode/utf8.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>

namespace dragoman {
namespace {

namespace dom = simdjson::dom;

// GPT-2's pre-tokenization, used by ByteLevel when use_regex is true.
constexpr const char* kGpt2Pattern = R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class Reader {
public:
    explicit Reader(std::string file) : file_(std::move(file)) {}
    [[noreturn]] void fail(const std::string& what) const { throw Error("tokenizer", file_ + ": " + what); }
    std::string_view text(dom::element e, const char* key) const {
        std::string_view v;
        if (e[key].get(v)) fail(std::string("missing or non-string '") + key + "'");
        return v;
    }
    bool flag(dom::element e, const char* key, bool fallback) const {
        bool v = fallback;
        auto field = e[key];
        if (field.error() == simdjson::SUCCESS && !field.is_null() && field.get(v)) fail(std::string("'") + key + "' must be a boolean");
        return v;
    }

private:
    std::string file_;
};

bool isSpace(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

bool isWordCodePoint(UChar32 c) {
    return c >= 0 && (u_isalnum(c) || c == '_');
}

bool wordCharAt(std::string_view text, std::size_t at) {
    if (at >= text.size()) return false;
    UChar32 c;
    auto i = static_cast<std::int32_t>(at);
    U8_NEXT(reinterpret_cast<const std::uint8_t*>(text.data()), i, static_cast<std::int32_t>(text.size()), c);
    return isWordCodePoint(c);
}

bool wordCharBefore(std::string_view text, std::size_t at) {
    if (at == 0) return false;
    UChar32 c;
    auto i = static_cast<std::int32_t>(at);
    U8_PREV(reinterpret_cast<const std::uint8_t*>(text.data()), 0, i, c);
    return isWordCodePoint(c);
}

SplitBehavior behaviorFrom(std::string_view name, const Reader& r) {
    if (name == "Isolated") return SplitBehavior::Isolated;
    if (name == "Removed") return SplitBehavior::Removed;
    if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
    if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
    r.fail("unsupported Split behavior '" + std::string(name) + "'");
}

// The vocabulary and merges from the JSON, with every merge resolved to ids.
void fillModel(BpeModel& out, dom::element model, const Reader& r) {
    dom::object vocab;
    if (model["vocab"].get(vocab)) r.fail("model.vocab is missing");
    dom::array merges;
    if (model["merges"].get(merges)) r.fail("model.merges is missing");
    std::vector<std::pair<std::string_view, TokenId>> tokens;
    tokens.reserve(vocab.size());
    for (auto [token, id] : vocab) {
        std::int64_t value;
        if (id.get(value)) r.fail("vocabulary id of '" + std::string(token) + "' is not an integer");
        tokens.emplace_back(token, value);
    }
    out.setVocabulary(tokens);
    for (auto merge : merges) {
        std::string_view left, right;
        if (std::string_view joined; merge.get(joined) == simdjson::SUCCESS) {
            const auto space = joined.find(' ', 1);  // "a b"; a merge side never starts with a space (it is Ġ)
            if (space == std::string_view::npos) r.fail("merge '" + std::string(joined) + "' has no space");
            left = joined.substr(0, space);
            right = joined.substr(space + 1);
        } else if (dom::array pair; merge.get(pair) == simdjson::SUCCESS && pair.size() == 2) {
            if (pair.at(0).get(left) || pair.at(1).get(right)) r.fail("a merge pair is not two strings");
        } else {
            r.fail("a merge is neither \"a b\" nor [a, b]");
        }
        out.addMerge(left, right);
    }
    out.setIgnoreMerges(r.flag(model, "ignore_merges", false));
    if (r.flag(model, "byte_fallback", false)) r.fail("BPE byte_fallback is not supported");
    if (auto unk = model["unk_token"]; unk.error() == simdjson::SUCCESS && !unk.is_null()) {
        std::string_view name;
        if (unk.get(name)) r.fail("unk_token must be a string");
        out.setUnknown(out.find(name));
    }
    for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
        if (auto v = model[key]; v.error() == simdjson::SUCCESS && !v.is_null())
            if (std::string_view s; !v.get(s) && !s.empty()) r.fail(std::string("model.") + key + " is not supported");
}

// Where the compiled form of a tokenizer.json lives: our model cache (the hub cache is read-only), named by
// the file's path, size and modification time, so an edited file is compiled again.
std::filesystem::path compiledCachePath(const std::filesystem::path& json) {
    std::error_code ec;
    const auto canonical = std::filesystem::weakly_canonical(json, ec);
    const auto size = std::filesystem::file_size(json, ec);
    const auto mtime = std::filesystem::last_write_time(json, ec).time_since_epoch().count();
    const auto key = canonical.string() + "|" + std::to_string(size) + "|" + std::to_string(mtime);
    return paths::modelCacheDir() / ".compiled" / (fmt::format("{:016x}", std::hash<std::string>{}(key)) + ".bpe");
}

constexpr std::string_view kCompiledMagic = "DRAGOMAN-BPE-3\n";

// The compiled cache: the header, a checksum of the rest, the tokenizer.json without its vocabulary and merges
// (withoutVocabulary), then the BpeModel's own form. With it, loading reads neither the JSON's 7 MB nor its vocabulary.
// The checksum refuses a damaged file wherever the damage is (in the settings it could change what the tokenizer
// does); the model's own checks stand behind it.
std::uint64_t checksum(std::string_view bytes) {
    return std::hash<std::string_view>{}(bytes);
}

bool readCompiled(BpeModel& model, std::string& settings, const std::filesystem::path& file) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) return false;
    std::shared_ptr<const MappedFile> mapping;
    try {
        mapping = MappedFile::open(file);
    } catch (const Error&) {
        return false;  // unreadable: compiled again from the JSON
    }
    std::string_view blob(reinterpret_cast<const char*>(mapping->data()), static_cast<std::size_t>(mapping->size()));
    const auto header = std::string(kCompiledMagic) + file.filename().string() + "\n";  // file is compiledCachePath(json)
    if (!blob.starts_with(header)) return false;
    std::string_view rest = blob.substr(header.size());
    std::uint64_t sum = 0, settingsSize = 0;
    if (rest.size() < sizeof sum + sizeof settingsSize) return false;
    std::memcpy(&sum, rest.data(), sizeof sum);
    rest.remove_prefix(sizeof sum);
    if (checksum(rest) != sum) {
        log::logger().warn("ignoring a damaged compiled tokenizer {}", file.string());
        return false;
    }
    std::memcpy(&settingsSize, rest.data(), sizeof settingsSize);
    rest.remove_prefix(sizeof settingsSize);
    BpeModel loaded;
    // The token texts and merge table are read where they are mapped (the model keeps the mapping).
    if (settingsSize > rest.size() || !loaded.deserialize(rest.substr(settingsSize), mapping)) {
        log::logger().warn("ignoring a damaged compiled tokenizer {}", file.string());
        return false;
    }
    settings.assign(rest.substr(0, settingsSize));
    model = std::move(loaded);
    return true;
}

void writeCompiled(const BpeModel& model, const std::string& settings, const std::filesystem::path& file) {
    std::string blob = std::string(kCompiledMagic) + file.filename().string() + "\n";
    const auto sumAt = blob.size();
    blob.append(sizeof(std::uint64_t), '\0');
    const std::uint64_t settingsSize = settings.size();
    blob.append(reinterpret_cast<const char*>(&settingsSize), sizeof settingsSize);
    blob += settings;
    model.serialize(blob);
    const auto sum = checksum(std::string_view(blob).substr(sumAt + sizeof(std::uint64_t)));
    std::memcpy(blob.data() + sumAt, &sum, sizeof sum);
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    const auto temporary = file.string() + ".partial";
    std::ofstream out(temporary, std::ios::binary);
    out.write(blob.data(), static_cast<std::streamsize>(blob.size()));
    out.close();
    if (!out || (std::filesystem::rename(temporary, file, ec), ec)) {
        std::filesystem::remove(temporary, ec);
        log::logger().debug("could not cache the compiled tokenizer at {}", file.string());  // loading still works
    }
}

namespace ondemand = simdjson::ondemand;

// A value's JSON text as written (simdjson 3.0 has raw_json() on objects and arrays; a scalar is its one token).
bool rawJson(ondemand::value& value, std::string_view& raw) {
    ondemand::json_type type;
    if (value.type().get(type)) return false;
    if (type == ondemand::json_type::object) {
        ondemand::object object;
        return !value.get_object().get(object) && !object.raw_json().get(raw);
    }
    if (type == ondemand::json_type::array) {
        ondemand::array array;
        return !value.get_array().get(array) && !array.raw_json().get(raw);
    }
    raw = value.raw_json_token();
    return true;
}

// Writes `object` as {"key":value,...}, where the model object (inModel) leaves out its vocabulary and merges, unread;
// false on an error or a key that would need escaping.
bool copyFields(ondemand::object& object, std::string& out, bool inModel) {
    out += '{';
    bool first = true;
    for (auto result : object) {
        ondemand::field field;
        std::string_view key, raw;
        if (std::move(result).get(field) || field.unescaped_key().get(key)) return false;
        if (std::any_of(key.begin(), key.end(), [](char c) { return c == '"' || c == '\\' || static_cast<unsigned char>(c) < 0x20; }))
            return false;
        if (inModel && (key == "vocab" || key == "merges")) continue;
        out += first ? "\"" : ",\"";
        first = false;
        out += key;
        out += "\":";
        if (!inModel && key == "model") {
            ondemand::object model;
            if (field.value().get_object().get(model) || !copyFields(model, out, true)) return false;
        } else {
            if (!rawJson(field.value(), raw)) return false;
            out += raw;
        }
    }
    out += '}';
    return true;
}

// tokenizer.json without model.vocab and model.merges, every other field as written: what load() still reads when
// the compiled cache holds the vocabulary and merges. On-demand parsing skips the two without building them.
// nullopt where the file is not the plain object this expects (the full parse then reports what is wrong).
std::optional<std::string> withoutVocabulary(const simdjson::padded_string& json) {
    ondemand::parser parser;
    ondemand::document doc;
    ondemand::object root;
    std::string out;
    if (parser.iterate(json).get(doc) || doc.get_object().get(root) || !copyFields(root, out, false)) return std::nullopt;
    return out;
}

}  // namespace

BpeTokenizer::BpeTokenizer(const std::filesystem::path& tokenizerJson) {
    try {
        load(tokenizerJson);
    } catch (const Error& e) {
        // Errors from the parts (a regex, a merge) get the file's name in front.
        if (e.detail().find(tokenizerJson.string()) != std::string::npos) throw;
        throw Error(e.category(), tokenizerJson.string() + ": " + e.detail());
    }
}

void BpeTokenizer::load(const std::filesystem::path& tokenizerJson) {
    const Reader r(tokenizerJson.string());
    // The compiled cache, when it matches this file (path, size and time), holds the vocabulary and merges and the
    // rest of the JSON: a 120k-token file is 7 MB, nearly all of it vocabulary and merges, and reading and parsing it
    // took 30-60 ms of a model's start. Else the JSON is read whole, and the cache written for next time.
    const auto cacheFile = compiledCachePath(tokenizerJson);
    std::string settings;
    const bool compiled = readCompiled(model_, settings, cacheFile);
    simdjson::padded_string json;
    if (!compiled) {
        if (auto error = simdjson::padded_string::load(tokenizerJson.string()).get(json))
            r.fail(std::string("not readable: ") + simdjson::error_message(error));
    }
    dom::parser parser;
    dom::element root;
    if (auto error = (compiled ? parser.parse(settings) : parser.parse(json)).get(root))
        r.fail(std::string("not readable JSON: ") + simdjson::error_message(error));

    dom::element model;
    if (root["model"].get(model)) r.fail("no 'model'");
    if (r.text(model, "type") != "BPE") r.fail("model type '" + std::string(r.text(model, "type")) + "' is not supported (BPE only)");
    if (!compiled) {
        fillModel(model_, model, r);
        // A file of a shape withoutVocabulary() does not take is parsed whole every time.
        if (auto rest = withoutVocabulary(json)) writeCompiled(model_, *rest, cacheFile);
    }

    vocabSize_ = model_.size();
    if (dom::array added; root["added_tokens"].get(added) == simdjson::SUCCESS) {
        for (auto token : added) {
            std::int64_t id;
            if (token["id"].get(id)) r.fail("an added token has no id");
            Added a{std::string(r.text(token, "content")), id,
                    r.flag(token, "special", false),       r.flag(token, "lstrip", false),
                    r.flag(token, "rstrip", false),        r.flag(token, "single_word", false)};
            if (a.content.empty()) r.fail("an added token is empty");
            addedById_[id] = added_.size();
            added_.push_back(std::move(a));
            vocabSize_ = std::max(vocabSize_, static_cast<std::size_t>(id) + 1);
        }
    }
    for (std::size_t i = 0; i < added_.size(); ++i)
        addedByFirstByte_[static_cast<unsigned char>(added_[i].content[0])].push_back(i);
    for (auto& bucket : addedByFirstByte_)
        std::stable_sort(bucket.begin(), bucket.end(), [&](auto a, auto b) { return added_[a].content.size() > added_[b].content.size(); });

    if (auto normalizer = root["normalizer"]; normalizer.error() == simdjson::SUCCESS && !normalizer.is_null()) {
        const auto type = r.text(normalizer.value(), "type");
        if (type == "NFC")
            normalization_ = Normalization::NFC;
        else if (type == "NFKC")
            normalization_ = Normalization::NFKC;
        else if (type == "NFD")
            normalization_ = Normalization::NFD;
        else if (type == "NFKD")
            normalization_ = Normalization::NFKD;
        else
            r.fail("normalizer '" + std::string(type) + "' is not supported");
    }

    auto addPreTokenizer = [&](dom::element p) {
        const auto type = r.text(p, "type");
        if (type == "Split") {
            if (r.flag(p, "invert", false)) r.fail("Split with invert is not supported");
            dom::element pattern;
            if (p["pattern"].get(pattern)) r.fail("Split has no pattern");
            std::string_view value;
            const bool isRegex = pattern["Regex"].get(value) == simdjson::SUCCESS;
            if (!isRegex && pattern["String"].get(value)) r.fail("Split pattern is neither Regex nor String");
            splits_.emplace_back(std::string(value), !isRegex, behaviorFrom(r.text(p, "behavior"), r));
        } else if (type == "ByteLevel") {
            byteLevel_ = true;
            addPrefixSpace_ = r.flag(p, "add_prefix_space", false);
            if (r.flag(p, "use_regex", true)) splits_.emplace_back(kGpt2Pattern, false, SplitBehavior::Isolated);
        } else {
            r.fail("pre_tokenizer '" + std::string(type) + "' is not supported");
        }
    };
    if (auto pre = root["pre_tokenizer"]; pre.error() == simdjson::SUCCESS && !pre.is_null()) {
        if (r.text(pre.value(), "type") == "Sequence") {
            dom::array list;
            if (pre["pretokenizers"].get(list)) r.fail("pre_tokenizer Sequence has no list");
            for (auto p : list)
                addPreTokenizer(p);
        } else {
            addPreTokenizer(pre.value());
        }
    }
    if (!byteLevel_) r.fail("only byte-level BPE is supported (no ByteLevel pre-tokenizer)");

    // The post-processor's template for one sequence: special tokens before and after it.
    auto addTemplate = [&](dom::element p) {
        const auto type = r.text(p, "type");
        if (type == "ByteLevel") return;  // offsets only
        if (type != "TemplateProcessing") r.fail("post_processor '" + std::string(type) + "' is not supported");
        dom::array single;
        if (p["single"].get(single)) r.fail("TemplateProcessing has no 'single'");
        bool seenSequence = false;
        for (auto piece : single) {
            if (piece["Sequence"].error() == simdjson::SUCCESS) {
                seenSequence = true;
                continue;
            }
            dom::element special;
            if (piece["SpecialToken"].get(special)) r.fail("TemplateProcessing piece is neither Sequence nor SpecialToken");
            const auto name = r.text(special, "id");
            dom::array ids;
            if (p["special_tokens"][name]["ids"].get(ids))
                r.fail("TemplateProcessing special token '" + std::string(name) + "' has no ids");
            for (auto id : ids)
                (seenSequence ? suffix_ : prefix_).push_back(id.get_int64().value());
        }
    };
    if (auto post = root["post_processor"]; post.error() == simdjson::SUCCESS && !post.is_null()) {
        if (r.text(post.value(), "type") == "Sequence") {
            dom::array list;
            if (post["processors"].get(list)) r.fail("post_processor Sequence has no list");
            for (auto p : list)
                addTemplate(p);
        } else {
            addTemplate(post.value());
        }
    }
    if (auto decoder = root["decoder"]; decoder.error() == simdjson::SUCCESS && !decoder.is_null()) {
        const auto type = r.text(decoder.value(), "type");
        if (type != "ByteLevel") r.fail("decoder '" + std::string(type) + "' is not supported (ByteLevel only)");
    }
}

std::optional<TokenId> BpeTokenizer::idOf(std::string_view token) const {
    for (const auto& a : added_)
        if (a.content == token) return a.id;
    return model_.find(token);
}

std::optional<std::string> BpeTokenizer::tokenText(TokenId id) const {
    if (auto it = addedById_.find(id); it != addedById_.end()) return added_[it->second].content;
    if (auto t = model_.token(id)) return std::string(*t);
    return std::nullopt;
}

bool BpeTokenizer::isSpecial(TokenId id) const {
    auto it = addedById_.find(id);
    return it != addedById_.end() && added_[it->second].special;
}

void BpeTokenizer::appendSegment(std::string_view segment, std::vector<TokenId>& out) const {
    std::string normalized;
    if (normalization_ != Normalization::None) {
        UErrorCode status = U_ZERO_ERROR;
        const icu::Normalizer2* n = normalization_ == Normalization::NFC    ? icu::Normalizer2::getNFCInstance(status)
                                    : normalization_ == Normalization::NFKC ? icu::Normalizer2::getNFKCInstance(status)
                                    : normalization_ == Normalization::NFD  ? icu::Normalizer2::getNFDInstance(status)
                                                                            : icu::Normalizer2::getNFKDInstance(status);
        const auto result =
            n->normalize(icu::UnicodeString::fromUTF8(icu::StringPiece(segment.data(), static_cast<std::int32_t>(segment.size()))), status);
        if (U_FAILURE(status)) throw Error("tokenizer", "normalization failed");
        result.toUTF8String(normalized);
        segment = normalized;
    }
    std::string prefixed;
    if (addPrefixSpace_ && !segment.empty() && segment.front() != ' ') {
        prefixed = " " + std::string(segment);
        segment = prefixed;
    }
    // Each Split applies to every piece the previous one produced.
    std::vector<std::string_view> pieces{segment}, next;
    for (const auto& split : splits_) {
        next.clear();
        for (auto piece : pieces)
            split.split(piece, next);
        pieces.swap(next);
    }
    for (auto piece : pieces)
        model_.encodeBytes(piece, out);
}

std::vector<TokenId> BpeTokenizer::encodePlain(std::string_view text) const {
    if (!utf8::isValid(text)) throw Error("input", "text is not valid UTF-8");
    std::vector<TokenId> ids;
    std::size_t segmentStart = 0;
    for (std::size_t i = 0; i < text.size();) {
        const Added* hit = nullptr;
        for (auto index : addedByFirstByte_[static_cast<unsigned char>(text[i])]) {
            const auto& a = added_[index];
            if (text.compare(i, a.content.size(), a.content) != 0) continue;
            // single_word: only where the token is not part of a longer word.
            if (a.singleWord && (wordCharBefore(text, i) || wordCharAt(text, i + a.content.size()))) continue;
            hit = &a;
            break;
        }
        if (!hit) {
            ++i;
            continue;
        }
        // lstrip / rstrip: the token also takes the whitespace on that side.
        auto start = i, end = i + hit->content.size();
        if (hit->lstrip)
            while (start > segmentStart && isSpace(text[start - 1]))
                --start;
        if (hit->rstrip)
            while (end < text.size() && isSpace(text[end]))
                ++end;
        appendSegment(text.substr(segmentStart, start - segmentStart), ids);
        ids.push_back(hit->id);
        i = end;
        segmentStart = i;
    }
    appendSegment(text.substr(segmentStart), ids);
    return ids;
}

std::vector<TokenId> BpeTokenizer::encode(std::string_view text) const {
    auto body = encodePlain(text);
    if (prefix_.empty() && suffix_.empty()) return body;
    std::vector<TokenId> ids(prefix_);
    ids.insert(ids.end(), body.begin(), body.end());
    ids.insert(ids.end(), suffix_.begin(), suffix_.end());
    return ids;
}

std::string BpeTokenizer::decode(const std::vector<TokenId>& ids, bool skipSpecial) const {
    std::string bytes;
    for (auto id : ids) {
        if (auto it = addedById_.find(id); it != addedById_.end()) {
            const auto& a = added_[it->second];
            if (skipSpecial && a.special) continue;
            // An added token's characters are byte stand-ins only by accident; otherwise its own UTF-8.
            if (auto raw = byte_level::toBytes(a.content))
                bytes += *raw;
            else
                bytes += a.content;
            continue;
        }
        const auto token = model_.token(id);
        if (!token) continue;  // ids outside the vocabulary decode to nothing, as tokenizers does
        if (auto raw = byte_level::toBytes(*token))
            bytes += *raw;
        else
            bytes += *token;
    }
    return utf8::lossy(bytes);
}

}  // namespace dragoman
