#include "text/marian_tokenizer.h"

#include "util/error.h"
#include "util/regular_file.h"

#include <simdjson.h>

#include <algorithm>
#include <exception>
#include <fstream>
#include <future>
#include <iterator>

namespace dragoman {
namespace {

constexpr std::string_view kUnderline = "\xe2\x96\x81";  // U+2581, sentencepiece's word boundary

// Whether two files hold the same bytes (both read whole: sentencepiece models are a few hundred KB).
bool sameBytes(const std::filesystem::path& a, const std::filesystem::path& b) {
    std::error_code ec;
    const auto size = std::filesystem::file_size(a, ec);
    if (ec || std::filesystem::file_size(b, ec) != size || ec) return false;
    requireRegularFile(a);
    requireRegularFile(b);
    std::ifstream x(a, std::ios::binary), y(b, std::ios::binary);
    return x && y && std::equal(std::istreambuf_iterator<char>(x), std::istreambuf_iterator<char>(), std::istreambuf_iterator<char>(y));
}

// vocab.json's pieces and ids, through simdjson (nlohmann took ~20 ms of every start for a 16k-token file): each
// checked, then given to `take`.
template <typename Take>
void readVocabulary(const std::filesystem::path& path, Take&& take) {
    const auto file = path.string();
    simdjson::padded_string json;
    simdjson::dom::parser parser;
    simdjson::dom::object vocab;
    if (auto error = simdjson::padded_string::load(file).get(json))
        throw Error("tokenizer", file + ": not readable: " + simdjson::error_message(error));
    if (auto error = parser.parse(json).get(vocab))
        throw Error("tokenizer", file + ": not a JSON object: " + simdjson::error_message(error));
    for (auto [key, id] : vocab) {
        std::int64_t value = -1;
        if (id.get(value) || value < 0 || value > 0x7FFFFFFF)
            throw Error("tokenizer", file + ": id of '" + std::string(key) + "' is not a non-negative integer");
        take(key, static_cast<TokenId>(value));
    }
}

bool isLanguageToken(std::string_view piece) {
    return piece.size() > 4 && piece.substr(0, 2) == ">>" && piece.substr(piece.size() - 2) == "<<";
}

}  // namespace

MarianTokenizer::MarianTokenizer(const std::filesystem::path& dir) {
    // Loading a SentencePiece model builds its tries, a dozen milliseconds of a process's start each: the models load
    // on threads of their own while this one reads the vocabulary. Their failures are reported first, as when they
    // loaded one after the other (each comes out of get()).
    const auto load = [](std::filesystem::path path) {
        return std::async(std::launch::async, [path = std::move(path)] { return std::make_shared<const SentencePiece>(path); });
    };
    const bool oneModel = sameBytes(dir / "source.spm", dir / "target.spm");
    auto source = load(dir / "source.spm");
    std::future<std::shared_ptr<const SentencePiece>> target;
    if (!oneModel) target = load(dir / "target.spm");
    std::exception_ptr vocabularyFailure;
    try {
        readVocabulary(dir / "vocab.json", [&](std::string_view key, TokenId id) {
            const std::string piece(key);
            ids_[piece] = id;
            if (static_cast<std::size_t>(id) >= pieces_.size()) pieces_.resize(static_cast<std::size_t>(id) + 1);
            pieces_[static_cast<std::size_t>(id)] = piece;
        });
    } catch (...) {
        vocabularyFailure = std::current_exception();
    }
    source_ = source.get();
    target_ = oneModel ? source_ : target.get();
    if (vocabularyFailure) std::rethrow_exception(vocabularyFailure);
    auto special = [&](const char* piece, bool required) -> TokenId {
        auto it = ids_.find(piece);
        if (it == ids_.end()) {
            if (required) throw Error("tokenizer", (dir / "vocab.json").string() + ": no '" + piece + "' token");
            return -1;
        }
        return it->second;
    };
    eos_ = special("</s>", true);
    unk_ = special("<unk>", true);
    pad_ = special("<pad>", false);
}

std::optional<TokenId> MarianTokenizer::idOf(std::string_view piece) const {
    auto it = ids_.find(std::string(piece));
    return it == ids_.end() ? std::nullopt : std::optional<TokenId>(it->second);
}

std::vector<TokenId> MarianTokenizer::encode(std::string_view text) const {
    std::vector<TokenId> ids;
    std::string rest(text);
    // transformers: language_code_re = ">>.+<<" matched at the start (greedy), then removed.
    if (rest.rfind(">>", 0) == 0) {
        const auto close = rest.rfind("<<");
        if (close != std::string::npos && close >= 3) {
            const std::string code = rest.substr(0, close + 2);
            ids.push_back(idOf(code).value_or(unk_));
            rest = rest.substr(close + 2);
        }
    }
    const auto body = encodeText(rest);
    ids.insert(ids.end(), body.begin(), body.end());
    return ids;
}

std::vector<TokenId> MarianTokenizer::encodeText(std::string_view text) const {
    std::vector<TokenId> ids;
    for (const auto& piece : source_->encodePieces(text))
        ids.push_back(idOf(piece).value_or(unk_));
    ids.push_back(eos_);
    return ids;
}

std::string MarianTokenizer::decode(const std::vector<TokenId>& ids, bool skipSpecial) const {
    // As MarianTokenizer.convert_tokens_to_string: runs of ordinary pieces go through the target
    // sentencepiece model; special tokens are written as themselves followed by a space.
    std::string out;
    std::vector<std::string> run;
    for (TokenId id : ids) {
        if (id < 0 || static_cast<std::size_t>(id) >= pieces_.size())
            throw Error("tokenizer",
                        "token id " + std::to_string(id) + " is outside the vocabulary (" + std::to_string(pieces_.size()) + ")");
        if (isSpecial(id)) {
            if (skipSpecial) continue;
            out += target_->decodePieces(run) + pieces_[id] + " ";
            run.clear();
        } else {
            run.push_back(pieces_[id]);
        }
    }
    out += target_->decodePieces(run);
    for (auto at = out.find(kUnderline); at != std::string::npos; at = out.find(kUnderline, at))
        out.replace(at, kUnderline.size(), " ");
    const auto first = out.find_first_not_of(' ');
    if (first == std::string::npos) return {};
    return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

std::vector<std::string> MarianTokenizer::languageTokens() const {
    std::vector<std::string> codes;
    for (const auto& piece : pieces_)
        if (isLanguageToken(piece)) codes.push_back(piece);
    return codes;
}

std::vector<std::string> MarianTokenizer::languageTokensIn(const std::filesystem::path& dir) {
    // By id, the last piece of an id winning, as the tokenizer's own table reads the file.
    std::map<TokenId, std::string> found;
    readVocabulary(dir / "vocab.json", [&](std::string_view piece, TokenId id) {
        if (isLanguageToken(piece))
            found[id] = std::string(piece);
        else
            found.erase(id);
    });
    std::vector<std::string> codes;
    for (auto& [id, piece] : found)
        codes.push_back(std::move(piece));
    return codes;
}

}  // namespace dragoman
