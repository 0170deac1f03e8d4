#pragma once
// What generation needs from a decoder-only model. The model is read-only and shared; the KV cache lives in
// a CausalState owned by one request, preallocated for the longest sequence the request may reach. No libtorch
// here: the CPU path runs without it (cpu/), the libtorch models convert at their edge (decode/logits_tensor.h).
#include "decode/logits.h"
#include "models/linear_module.h"
#include "models/vocabulary_table.h"
#include "text/tokenizer.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace dragoman {

class LoraSet;

class CausalState {
public:
    virtual ~CausalState() = default;
    virtual std::int64_t length() const = 0;    // tokens fed so far
    virtual std::int64_t capacity() const = 0;  // tokens the cache has room for

    // Asked between layers while a prompt runs: true makes forward() throw Cancelled (a long prompt takes
    // seconds on a CPU, and a superseded request must not hold the engine that long).
    std::function<bool()> interrupted;
    // The request's adapter (null: the base model alone), applied unmerged by every Linear it targets.
    std::shared_ptr<const LoraSet> adapter;
};

class CausalLanguageModel {
public:
    virtual ~CausalLanguageModel() = default;

    // A fresh cache with room for `maxTokens` tokens (prompt and generated).
    virtual std::unique_ptr<CausalState> start(std::int64_t maxTokens) const = 0;
    // Feeds `ids` after what the state holds. Returns logits [T, V] when allPositions, else [1, V] for the last
    // position only. Throws Error("input") past the cache's capacity or for an id outside the vocabulary,
    // Cancelled when the state's `interrupted` says so.
    virtual Logits forward(CausalState& state, const std::vector<TokenId>& ids, bool allPositions = false) const = 0;
    // One decoding step for several sequences at once: states[i] is fed ids[i]. Returns logits [B, V] whose row i
    // equals what forward(*states[i], {ids[i]}) returns alone, bit for bit (decode/batch_search.h relies on it).
    // The default runs them one by one; a model overrides it to read its weights once for all.
    virtual Logits stepMany(const std::vector<CausalState*>& states, const std::vector<TokenId>& ids) const;

    // Makes `to` (a state of this model with at least `from`'s length of room) hold what `from` holds: its cache and
    // length (beam search: a hypothesis continued by two beams). The adapter is not copied.
    virtual void copyState(const CausalState& from, CausalState& to) const = 0;

    virtual std::int64_t vocabSize() const = 0;
    virtual std::int64_t maxPositions() const = 0;
    // Bytes of weights one decoding step reads (for the bandwidth efficiency report).
    virtual std::int64_t weightBytesPerToken() const = 0;
    // The model's linear layers by slot: what adapters bind to, by module name.
    virtual std::vector<LinearModule> linears() const = 0;
    // Its embedding and output tables (VocabularyTable).
    virtual std::vector<VocabularyTable> vocabularyTables() const = 0;
};

}  // namespace dragoman
