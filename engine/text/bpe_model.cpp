#include "text/bpe_model.h"

#include "text/byte_level.h"
#include "text/utf8.h"
#include "util/error.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <mutex>
#include <queue>
#include <type_traits>
#include <unordered_map>

namespace dragoman {

struct BpeModel::Lookup {
    std::once_flag once;
    std::unordered_map<std::string_view, TokenId> ids;
};

BpeModel::BpeModel() : lookup_(std::make_unique<Lookup>()) {
    byteIds_.fill(-1);
}
BpeModel::~BpeModel() = default;
BpeModel::BpeModel(BpeModel&&) noexcept = default;
BpeModel& BpeModel::operator=(BpeModel&&) noexcept = default;

void BpeModel::setVocabulary(const std::vector<std::pair<std::string_view, TokenId>>& tokens) {
    TokenId top = -1;
    std::size_t bytes = 0;
    for (const auto& [text, id] : tokens) {
        if (id < 0 || id > 0x7FFFFFFF)
            throw Error("tokenizer", "token id " + std::to_string(id) + " of '" + std::string(text) + "' is out of range");
        top = std::max(top, id);
        bytes += text.size();
    }
    std::vector<std::string_view> byId(static_cast<std::size_t>(top + 1));
    for (const auto& [text, id] : tokens)
        byId[static_cast<std::size_t>(id)] = text;
    arena_.clear();
    arena_.reserve(bytes);
    offsets_.assign(1, 0);
    for (auto text : byId) {
        arena_.insert(arena_.end(), text.begin(), text.end());
        offsets_.push_back(static_cast<std::uint32_t>(arena_.size()));
    }
    backing_.reset();
    viewOwned();
    lookup_ = std::make_unique<Lookup>();
    computeByteIds();
}

void BpeModel::viewOwned() {
    arenaView_ = std::string_view(arena_.data(), arena_.size());
    offsetView_ = offsets_;
    mergeView_ = merges_;
}

void BpeModel::computeByteIds() {
    const auto& symbols = byte_level::byteToChar();
    for (int b = 0; b < 256; ++b)
        byteIds_[static_cast<std::size_t>(b)] = find(symbols[static_cast<std::size_t>(b)]).value_or(-1);
}

std::optional<std::string_view> BpeModel::token(TokenId id) const {
    if (id < 0 || static_cast<std::size_t>(id) >= size()) return std::nullopt;
    const auto begin = offsetView_[static_cast<std::size_t>(id)], end = offsetView_[static_cast<std::size_t>(id) + 1];
    if (begin == end) return std::nullopt;
    return arenaView_.substr(begin, end - begin);
}

std::optional<TokenId> BpeModel::find(std::string_view text) const {
    std::call_once(lookup_->once, [this] {
        lookup_->ids.reserve(size());
        for (std::size_t id = 0; id < size(); ++id)
            if (auto t = token(static_cast<TokenId>(id))) lookup_->ids.emplace(*t, static_cast<TokenId>(id));  // first id wins
    });
    auto it = lookup_->ids.find(text);
    if (it == lookup_->ids.end()) return std::nullopt;
    return it->second;
}

const BpeModel::Slot* BpeModel::findMerge(TokenId a, TokenId b) const {
    if (mergeView_.empty()) return nullptr;
    const auto key = pairKey(a, b);
    const auto mask = mergeView_.size() - 1;
    for (auto i = home(key, mask);; i = (i + 1) & mask) {
        const auto& slot = mergeView_[i];
        if (slot.key == key) return &slot;
        if (slot.key == kEmpty) return nullptr;
    }
}

void BpeModel::growMerges() {
    std::vector<Slot> old = std::move(merges_);
    merges_.assign(std::max<std::size_t>(1024, old.size() * 2), Slot{});
    mergeCount_ = 0;
    for (const auto& slot : old)
        if (slot.key != kEmpty)
            putMerge(static_cast<TokenId>(slot.key >> 32), static_cast<TokenId>(slot.key & 0xFFFFFFFFu), slot.rank, slot.merged);
}

bool BpeModel::putMerge(TokenId a, TokenId b, std::int32_t rank, TokenId merged) {
    if ((mergeCount_ + 1) * 2 > merges_.size()) growMerges();
    const auto key = pairKey(a, b);
    const auto mask = merges_.size() - 1;
    for (auto i = home(key, mask);; i = (i + 1) & mask) {
        auto& slot = merges_[i];
        const bool added = slot.key == kEmpty;
        if (added) ++mergeCount_;
        if (added || slot.key == key) {
            slot = Slot{key, rank, static_cast<std::int32_t>(merged)};  // a repeated pair keeps its last rank, as tokenizers does
            return added;
        }
    }
}

void BpeModel::addMerge(std::string_view left, std::string_view right) {
    const auto a = find(left), b = find(right);
    scratch_.assign(left);
    scratch_ += right;
    const auto merged = find(scratch_);
    if (!a || !b || !merged)
        throw Error("tokenizer", "merge '" + std::string(left) + " " + std::string(right) + "' uses a token missing from the vocabulary");
    putMerge(*a, *b, nextRank_++, *merged);
    mergeView_ = merges_;
}

void BpeModel::encodeBytes(std::string_view raw, std::vector<TokenId>& out) const {
    if (raw.empty()) return;
    if (ignoreMerges_)
        if (auto whole = find(byte_level::fromBytes(raw))) {
            out.push_back(*whole);
            return;
        }
    // One symbol per byte (byte-level BPE starts from bytes), in a doubly linked list so merges are O(1).
    std::vector<TokenId> symbol;
    symbol.reserve(raw.size());
    for (char c : raw) {
        const auto id = byteIds_[static_cast<unsigned char>(c)];
        if (id >= 0)
            symbol.push_back(id);
        else if (unknown_)
            symbol.push_back(*unknown_);  // a byte outside the vocabulary with no unknown token is dropped
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
        if (const auto* m = findMerge(symbol[static_cast<std::size_t>(left)], symbol[static_cast<std::size_t>(right)]))
            queue.push({m->rank, left, m->merged});
    };
    for (std::int64_t i = 0; i + 1 < n; ++i)
        consider(i);
    while (!queue.empty()) {
        const auto top = queue.top();
        queue.pop();
        const auto left = static_cast<std::size_t>(top.position);
        if (!alive[left] || next[left] < 0) continue;
        const auto right = static_cast<std::size_t>(next[left]);
        // Skip stale entries: the pair at this position changed since the entry was queued.
        const auto* m = findMerge(symbol[left], symbol[right]);
        if (!m || m->merged != top.merged) continue;
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

namespace {

template <typename T>
void put(std::string& out, T value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof value);
}

template <typename T>
bool take(std::string_view& in, T& value) {
    if (in.size() < sizeof value) return false;
    std::memcpy(&value, in.data(), sizeof value);
    in.remove_prefix(sizeof value);
    return true;
}

// Zero bytes up to the next multiple of 16 of out's length, preceded by their count.
void padTo16(std::string& out) {
    const auto pad = static_cast<std::uint8_t>((16 - (out.size() + 1) % 16) % 16);
    put<std::uint8_t>(out, pad);
    out.append(pad, '\0');
}

bool skipPadding(std::string_view& in) {
    std::uint8_t pad = 0;
    if (!take(in, pad) || pad > 15 || in.size() < pad) return false;
    in.remove_prefix(pad);
    return true;
}

// `count` elements of T at the front of `in`: in place when `inPlace` and aligned, else copied into `owned`.
template <typename T>
bool takeArray(std::string_view& in, std::uint64_t count, bool inPlace, std::vector<T>& owned, std::span<const T>& view) {
    if (count > in.size() / sizeof(T)) return false;
    const auto n = static_cast<std::size_t>(count);
    if (inPlace && reinterpret_cast<std::uintptr_t>(in.data()) % alignof(T) == 0) {
        owned.clear();
        view = std::span<const T>(reinterpret_cast<const T*>(in.data()), n);
    } else {
        owned.resize(n);
        if (n > 0) std::memcpy(owned.data(), in.data(), n * sizeof(T));  // an empty vector's data() may be null
        view = owned;
    }
    in.remove_prefix(n * sizeof(T));
    return true;
}

}  // namespace

void BpeModel::serialize(std::string& out) const {
    put<std::uint64_t>(out, offsetView_.size());
    padTo16(out);
    out.append(reinterpret_cast<const char*>(offsetView_.data()), offsetView_.size_bytes());
    put<std::uint64_t>(out, arenaView_.size());
    out += arenaView_;
    // The merge table as it lies in memory (each pair with its own rank: a pair tokenizer.json repeats keeps only its
    // last rank, so ranks have gaps): loading reads it in place, where inserting 120k pairs again took tens of ms.
    put<std::uint64_t>(out, mergeView_.size());
    put<std::uint64_t>(out, mergeCount_);
    padTo16(out);
    out.append(reinterpret_cast<const char*>(mergeView_.data()), mergeView_.size_bytes());
    put<std::int32_t>(out, nextRank_);
    out.append(reinterpret_cast<const char*>(byteIds_.data()), sizeof byteIds_);
    put<std::uint8_t>(out, ignoreMerges_ ? 1 : 0);
    put<std::int64_t>(out, unknown_.value_or(-1));
}

bool BpeModel::deserialize(std::string_view in, std::shared_ptr<const void> backing) {
    static_assert(sizeof(Slot) == 16 && std::is_trivially_copyable_v<Slot>);
    const bool inPlace = backing != nullptr;
    std::uint64_t offsetCount = 0, arenaSize = 0, slots = 0, used = 0;
    // Every count and id in the blob is checked against what follows it: a damaged cache file is refused here,
    // never allowed to size an allocation, to produce an id outside the vocabulary or to hide a merge.
    if (!take(in, offsetCount) || offsetCount == 0 || !skipPadding(in) || !takeArray(in, offsetCount, inPlace, offsets_, offsetView_))
        return false;
    if (!take(in, arenaSize) || arenaSize > in.size()) return false;
    if (inPlace) {
        arena_.clear();
        arenaView_ = in.substr(0, arenaSize);
    } else {
        arena_.assign(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(arenaSize));
        arenaView_ = std::string_view(arena_.data(), arena_.size());
    }
    in.remove_prefix(arenaSize);
    for (std::size_t i = 0; i + 1 < offsetView_.size(); ++i)
        if (offsetView_[i] > offsetView_[i + 1] || offsetView_[i + 1] > arenaView_.size()) return false;
    if (!take(in, slots) || !take(in, used) || (slots != 0 && (slots < 1024 || !std::has_single_bit(slots))) || used * 2 > slots ||
        !skipPadding(in) || !takeArray(in, slots, inPlace, merges_, mergeView_))
        return false;
    if (!take(in, nextRank_)) return false;
    // Each pair must be one findMerge() reaches (no empty slot between its home and its place) with ids in the
    // vocabulary and a rank below the next one.
    const auto tokens = size();
    const auto mask = mergeView_.size() - 1;
    std::size_t count = 0;
    for (std::size_t i = 0; i < mergeView_.size(); ++i) {
        const auto& slot = mergeView_[i];
        if (slot.key == kEmpty) continue;
        ++count;
        const auto a = static_cast<std::size_t>(slot.key >> 32), b = static_cast<std::size_t>(slot.key & 0xFFFFFFFFu);
        if (a >= tokens || b >= tokens || slot.merged < 0 || static_cast<std::size_t>(slot.merged) >= tokens || slot.rank < 0 ||
            slot.rank >= nextRank_)
            return false;
        for (auto j = home(slot.key, mask); j != i; j = (j + 1) & mask)
            if (mergeView_[j].key == kEmpty || mergeView_[j].key == slot.key) return false;
    }
    if (count != used) return false;
    mergeCount_ = count;
    if (in.size() < sizeof byteIds_) return false;
    std::memcpy(byteIds_.data(), in.data(), sizeof byteIds_);
    in.remove_prefix(sizeof byteIds_);
    for (const auto id : byteIds_)
        if (id < -1 || id >= static_cast<TokenId>(tokens)) return false;
    std::uint8_t ignore = 0;
    std::int64_t unknown = -1;
    if (!take(in, ignore) || ignore > 1 || !take(in, unknown) || !in.empty()) return false;
    if (unknown < -1 || unknown >= static_cast<std::int64_t>(tokens)) return false;
    ignoreMerges_ = ignore != 0;
    if (unknown >= 0) unknown_ = unknown;
    backing_ = std::move(backing);
    lookup_ = std::make_unique<Lookup>();
    return true;
}

}  // namespace dragoman
