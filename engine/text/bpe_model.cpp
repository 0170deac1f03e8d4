#include "text/bpe_model.h"

#include "text/utf8.h"
#include "util/error.h"

#include <queue>

namespace dragoman {

void BpeModel::addToken(std::string token, TokenId id) {
    if (id < 0) throw Error("tokenizer", "negative token id for '" + token + "'");
    if (static_cast<std::size_t>(id) >= byId_.size()) byId_.resize(static_cast<std::size_t>(id) + 1);
    byId_[static_cast<std::size_t>(id)] = token;
    ids_.emplace(std::move(token), id);
}

void BpeModel::addMerge(std::string_view left, std::string_view right) {
    const auto a = find(left), b = find(right);
    std::string joined(left);
    joined += right;
    const auto merged = find(joined);
    if (!a || !b || !merged)
        throw Error("tokenizer", "merge '" + std::string(left) + " " + std::string(right) + "' uses a token missing from the vocabulary");
    // A repeated pair keeps its last rank, as tokenizers' map does.
    merges_[pairKey(*a, *b)] = Merge{nextRank_++, *merged};
}

std::optional<TokenId> BpeModel::find(std::string_view token) const {
    auto it = ids_.find(token);
    if (it == ids_.end()) return std::nullopt;
    return it->second;
}

const std::string* BpeModel::token(TokenId id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= byId_.size() || byId_[static_cast<std::size_t>(id)].empty()) return nullptr;
    return &byId_[static_cast<std::size_t>(id)];
}

void BpeModel::encodeWord(std::string_view word, std::vector<TokenId>& out) const {
    if (word.empty()) return;
    if (ignoreMerges_)
        if (auto whole = find(word)) {
            out.push_back(*whole);
            return;
        }
    // One symbol per character, in a doubly linked list so merges are O(1).
    std::vector<TokenId> symbol;
    for (std::size_t i = 0; i < word.size();) {
        const auto n = std::min(utf8::sequenceLength(static_cast<unsigned char>(word[i])), word.size() - i);
        if (auto id = find(word.substr(i, n))) symbol.push_back(*id);
        else if (unknown_) symbol.push_back(*unknown_);
        i += n;  // a character outside the vocabulary with no unknown token is dropped, as tokenizers does
    }
    const auto n = static_cast<std::int64_t>(symbol.size());
    std::vector<std::int64_t> next(static_cast<std::size_t>(n)), prev(static_cast<std::size_t>(n));
    std::vector<bool> alive(static_cast<std::size_t>(n), true);
    for (std::int64_t i = 0; i < n; ++i) {
        next[static_cast<std::size_t>(i)] = i + 1 < n ? i + 1 : -1;
        prev[static_cast<std::size_t>(i)] = i - 1;
    }
    struct Candidate {
        std::int32_t rank;
        std::int64_t position;
        TokenId merged;
        bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : position > o.position; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
    auto consider = [&](std::int64_t left) {
        const auto right = next[static_cast<std::size_t>(left)];
        if (right < 0) return;
        auto it = merges_.find(pairKey(symbol[static_cast<std::size_t>(left)], symbol[static_cast<std::size_t>(right)]));
        if (it != merges_.end()) queue.push({it->second.rank, left, it->second.merged});
    };
    for (std::int64_t i = 0; i + 1 < n; ++i) consider(i);
    while (!queue.empty()) {
        const auto top = queue.top();
        queue.pop();
        const auto left = static_cast<std::size_t>(top.position);
        if (!alive[left] || next[left] < 0) continue;
        const auto right = static_cast<std::size_t>(next[left]);
        // Skip stale entries: the pair at this position changed since the entry was queued.
        auto it = merges_.find(pairKey(symbol[left], symbol[right]));
        if (it == merges_.end() || it->second.merged != top.merged) continue;
        symbol[left] = top.merged;
        alive[right] = false;
        next[left] = next[right];
        if (next[right] >= 0) prev[static_cast<std::size_t>(next[right])] = top.position;
        if (prev[left] >= 0) consider(prev[left]);
        consider(top.position);
    }
    for (std::int64_t i = 0; i < n; ++i)
        if (alive[static_cast<std::size_t>(i)]) out.push_back(symbol[static_cast<std::size_t>(i)]);
}

}  // namespace dragoman
