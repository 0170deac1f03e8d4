#include "text/marian_tokenizer.h"

#include "util/error.h"
#include "util/json_file.h"

#include <nlohmann/json.hpp>

#include <fstream>

namespace dragoman {
namespace {

constexpr std::string_view kUnderline = "\xe2\x96\x81";  // U+2581, sentencepiece's word boundary

}  // namespace

MarianTokenizer::MarianTokenizer(const std::filesystem::path& dir) : source_(dir / "source.spm"), target_(dir / "target.spm") {
    const auto vocab = readJsonObject(dir / "vocab.json", "tokenizer");
    for (const auto& [piece, id] : vocab.items()) {
        if (!id.is_number_integer() || id.get<TokenId>() < 0)
            throw Error("tokenizer", (dir / "vocab.json").string() + ": id of '" + piece + "' is not a non-negative integer");
        const auto value = id.get<TokenId>();
        ids_[piece] = value;
        if (static_cast<std::size_t>(value) >= pieces_.size()) pieces_.resize(value + 1);
        pieces_[value] = piece;
    }
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
    for (const auto& piece : source_.encodePieces(text))
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
            out += target_.decodePieces(run) + pieces_[id] + " ";
            run.clear();
        } else {
            run.push_back(pieces_[id]);
        }
    }
    out += target_.decodePieces(run);
    for (auto at = out.find(kUnderline); at != std::string::npos; at = out.find(kUnderline, at))
        out.replace(at, kUnderline.size(), " ");
    const auto first = out.find_first_not_of(' ');
    if (first == std::string::npos) return {};
    return out.substr(first, out.find_last_not_of(' ') - first + 1);
}

std::vector<std::string> MarianTokenizer::languageTokens() const {
    std::vector<std::string> codes;
    for (const auto& piece : pieces_)
        if (piece.size() > 4 && piece.rfind(">>", 0) == 0 && piece.compare(piece.size() - 2, 2, "<<") == 0) codes.push_back(piece);
    return codes;
}

}  // namespace dragoman
