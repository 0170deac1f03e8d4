#pragma once
// What translating needs from an encoder-decoder model, without libtorch: sources through the encoder (remembered
// as what decoding reads of them), decoding states, and batched steps that return plain logits. Marian runs this way
// on the CPU kernels (models/marian_cpu.h); the libtorch MarianModel is seen the same way through libtorch's side
// (runtime/torch_backend.h), so the translation strategy and the decoding loops serve both.
#include "decode/logits.h"
#include "models/linear_module.h"
#include "models/vocabulary_table.h"
#include "text/tokenizer.h"

#include <memory>
#include <vector>

namespace dragoman {

class LoraSet;

// A request's decoding of one source: the hypotheses' caches. Owned by the request; the model is shared.
class DecoderState {
public:
    virtual ~DecoderState() = default;
    virtual std::int64_t length() const = 0;  // tokens fed so far
    // The request's adapter (null: the base model alone), applied unmerged by every linear layer it targets.
    std::shared_ptr<const LoraSet> adapter;
};

// What every decoding step reads of one encoded source (a Marian decoder's cross-attention keys and values,
// layer by layer): made once per source, then shared, unchanged, by every hypothesis and state decoding it.
class SourceMemory {
public:
    virtual ~SourceMemory() = default;
};

// Most source tokens one encoder pass of encodeSources() takes (a pass's activations grow with its rows); more sources
// are encoded in several passes.
constexpr std::int64_t kMostSourceRowsPerPass = 2048;

class Seq2SeqModel {
public:
    virtual ~Seq2SeqModel() = default;

    // Each source through the encoder under `adapter` (may be null), remembered for decoding under the same adapter:
    // result i for sources[i], the numbers it gets alone (several sources share passes where the products allow it).
    // Throws Error("input") for an empty source, one longer than the positions, or an id outside the vocabulary.
    virtual std::vector<std::shared_ptr<const SourceMemory>> encodeSources(const std::vector<std::vector<TokenId>>& sources,
                                                                           const LoraSet* adapter) const = 0;
    // The encoder's output for one source, [S, hiddenSize()] row-major (what `logits` writes as
    // encoder_last_hidden_state).
    virtual std::vector<float> encoderOutput(const std::vector<TokenId>& source, const LoraSet* adapter) const = 0;
    // A fresh state for `batch` hypotheses over a remembered source with room for `maxSteps` decoder tokens; the
    // adapter (may be null, the one `source` was remembered with) applies to every step.
    virtual std::unique_ptr<DecoderState> startDecoding(std::shared_ptr<const SourceMemory> source, std::int64_t batch,
                                                        std::int64_t maxSteps, std::shared_ptr<const LoraSet> adapter) const = 0;
    // One step for several states: tokens[i] (one per hypothesis) feed states[i]. Logits [sum of batches, vocab], the
    // states' rows one after another, each state's rows what it gets stepped alone, bit for bit.
    virtual Logits stepMany(const std::vector<DecoderState*>& states, const std::vector<std::vector<TokenId>>& tokens) const = 0;
    // Keeps hypotheses `beams` (indices into the current batch), in that order.
    virtual void reorder(DecoderState& state, const std::vector<std::int64_t>& beams) const = 0;

    // Work done ahead of the first request while its opener waits on something else (the tokenizer), a piece at a
    // time so that the waiting can stop after any: false once nothing is left (or there never was anything).
    virtual bool prepareAhead() const { return false; }

    virtual std::int64_t vocabSize() const = 0;
    virtual std::int64_t maxPositions() const = 0;
    virtual std::int64_t hiddenSize() const = 0;
    virtual TokenId decoderStartId() const = 0;
    virtual TokenId eosId() const = 0;
    virtual TokenId padId() const = 0;
    // The model's linear layers by slot: what adapters bind to, by module name.
    virtual std::vector<LinearModule> linears() const = 0;
    // Its embedding and output tables (VocabularyTable).
    virtual std::vector<VocabularyTable> vocabularyTables() const = 0;
};

}  // namespace dragoman
