#pragma once
// The BPE model of a tokenizer.json: vocabulary, merges by rank, and the merge loop of tokenizers'
// Word::merge_all (a priority queue of (rank, position): lowest rank first, leftmost on ties).
#include "text/tokenizer.h"

#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace dragoman {

class BpeModel {
public:
    struct Merge {
        std::int32_t rank;
        TokenId merged;
    };

    void addToken(std::string token, TokenId id);
    // Throws Error("tokenizer") when a side or the merged token is not in the vocabulary.
    void addMerge(std::string_view left, std::string_view right);
    void setIgnoreMerges(bool ignore) { ignoreMerges_ = ignore; }
    void setUnknown(std::optional<TokenId> unknown) { unknown_ = unknown; }

    // Ids of one pre-tokenized word (already in byte-level characters), appended to `out`.
    void encodeWord(std::string_view word, std::vector<TokenId>& out) const;

    std::optional<TokenId> find(std::string_view token) const;
    const std::string* token(TokenId id) const;
    std::size_t size() const { return byId_.size(); }

private:
    static std::uint64_t pairKey(TokenId a, TokenId b) { return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b); }

    struct StringHash {
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, TokenId, StringHash, std::equal_to<>> ids_;
    std::vector<std::string> byId_;
    std::unordered_map<std::uint64_t, Merge> merges_;
    std::int32_t nextRank_ = 0;
    bool ignoreMerges_ = false;
    std::optional<TokenId> unknown_;
};

}  // namespace dragoman
