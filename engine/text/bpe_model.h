#pragma once
// The BPE model of a tokenizer.json: vocabulary, merges by rank, and the merge loop of tokenizers'
// Word::merge_all (a priority queue of (rank, position): lowest rank first, leftmost on ties).
// Built for start-up time: token texts live in one arena, merges in a flat open-addressing table, and the
// text -> id map is only built the first time something asks for it (encoding never needs it).
#include "text/tokenizer.h"

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dragoman {

class BpeModel {
public:
    BpeModel();
    ~BpeModel();
    BpeModel(BpeModel&&) noexcept;
    BpeModel& operator=(BpeModel&&) noexcept;

    // The whole vocabulary at once (ids may come in any order; gaps are allowed).
    void setVocabulary(const std::vector<std::pair<std::string_view, TokenId>>& tokens);
    // Throws Error("tokenizer") when a side or the merged token is not in the vocabulary.
    void addMerge(std::string_view left, std::string_view right);
    void setIgnoreMerges(bool ignore) { ignoreMerges_ = ignore; }
    void setUnknown(std::optional<TokenId> unknown) { unknown_ = unknown; }

    // Ids of one pre-tokenized piece, given as its raw UTF-8 bytes (the byte-level mapping is implied).
    void encodeBytes(std::string_view raw, std::vector<TokenId>& out) const;

    std::optional<TokenId> find(std::string_view token) const;
    std::optional<std::string_view> token(TokenId id) const;
    std::size_t size() const { return offsetView_.empty() ? 0 : offsetView_.size() - 1; }

    // A binary form: the token texts and the merge table as they lie in memory, so loading is no work. serialize()
    // appends it to `out`, aligning its arrays to the start of `out` (the start of a file). deserialize() returns false
    // on a malformed blob; when `backing` holds `in` (a mapped file) and the arrays are aligned in memory, the model
    // reads them there and keeps `backing`, else it copies them.
    void serialize(std::string& out) const;
    bool deserialize(std::string_view in, std::shared_ptr<const void> backing = {});

private:
    struct Slot {
        std::uint64_t key = kEmpty;
        std::int32_t rank = 0;
        std::int32_t merged = 0;
    };
    static constexpr std::uint64_t kEmpty = ~0ull;
    static std::uint64_t pairKey(TokenId a, TokenId b) { return (static_cast<std::uint64_t>(a) << 32) | static_cast<std::uint32_t>(b); }
    // Where a pair's probe starts in a table of mask + 1 slots (findMerge, putMerge and deserialize's check agree).
    static std::size_t home(std::uint64_t key, std::size_t mask) { return (key * 0x9E3779B97F4A7C15ull) >> 20 & mask; }
    const Slot* findMerge(TokenId a, TokenId b) const;
    // False when the pair was there already (it then takes the new rank).
    bool putMerge(TokenId a, TokenId b, std::int32_t rank, TokenId merged);
    void growMerges();
    void computeByteIds();

    void viewOwned();

    // Built here (setVocabulary, addMerge) or copied by deserialize(); empty when the views read a mapped file.
    std::vector<char> arena_;             // every token's text, back to back
    std::vector<std::uint32_t> offsets_;  // token id -> [offsets_[id], offsets_[id + 1]) in arena_
    std::vector<Slot> merges_;            // open addressing, power-of-two size
    // What encoding reads: the vectors above, or the arrays of a mapped compiled file that backing_ keeps.
    std::string_view arenaView_;
    std::span<const std::uint32_t> offsetView_;
    std::span<const Slot> mergeView_;
    std::shared_ptr<const void> backing_;
    std::size_t mergeCount_ = 0;
    std::int32_t nextRank_ = 0;
    std::array<TokenId, 256> byteIds_{};  // the token of each single byte (-1: none)
    bool ignoreMerges_ = false;
    std::optional<TokenId> unknown_;
    struct Lookup;
    std::unique_ptr<Lookup> lookup_;  // text -> id, built on first use
    std::string scratch_;
};

}  // namespace dragoman
