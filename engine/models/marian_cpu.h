#pragma once
// MarianMTModel (OPUS-MT, the bundled model) as a Seq2SeqModel on the CPU kernels, without libtorch: the forward pass
// of cpu/marian_forward.h over weights bound as mapped, each request's caches in plain memory. It is what a Marian
// model runs as; bindMarianCheckpoint() binds it straight from the checkpoint with models/marian.h's checks (the
// libtorch MarianModel, which tools/train builds on, binds the same tensors).
#include "cpu/checkpoint_binder.h"
#include "cpu/marian_forward.h"
#include "decode/float_pool.h"
#include "io/checkpoint.h"
#include "models/adapter_views.h"
#include "models/marian_config.h"
#include "models/seq2seq.h"

#include <memory>
#include <string>
#include <vector>

namespace dragoman {

struct MarianCpuWeights {
    cpu::MarianWeights weights;
    cpu::BoundMemory memory;               // what the views point into
    std::int64_t int8ActivationBytes = 0;  // W8A8 weights (whether their panels are kept)
};

// Binds a checkpoint's tensors: every key MarianMTModel reads present with its shape, 8-bit weights with their scales,
// the copies hub files carry (the shared table under three more names, the positions) equal to what they copy,
// nothing unexpected left. Throws Error("checkpoint").
MarianCpuWeights bindMarianCheckpoint(const MarianConfig& config, const Checkpoint& checkpoint, const std::string& modelId);

class MarianCpuModel : public Seq2SeqModel {
public:
    MarianCpuModel(const MarianConfig& config, MarianCpuWeights weights);

    std::vector<std::shared_ptr<const SourceMemory>> encodeSources(const std::vector<std::vector<TokenId>>& sources,
                                                                   const LoraSet* adapter) const override;
    std::vector<float> encoderOutput(const std::vector<TokenId>& source, const LoraSet* adapter) const override;
    // The embeddings and each encoder layer's output (layers + 1 of [S, d]).
    std::vector<std::vector<float>> encoderHiddenStates(const std::vector<TokenId>& source) const;
    std::unique_ptr<DecoderState> startDecoding(std::shared_ptr<const SourceMemory> source, std::int64_t batch, std::int64_t maxSteps,
                                                std::shared_ptr<const LoraSet> adapter) const override;
    Logits stepMany(const std::vector<DecoderState*>& states, const std::vector<std::vector<TokenId>>& tokens) const override;
    void reorder(DecoderState& state, const std::vector<std::int64_t>& beams) const override;
    // The panels of the weights that keep them, one weight at a time (made otherwise by the first batched product).
    bool prepareAhead() const override { return forward_.makeNextPanels(); }

    std::int64_t vocabSize() const override { return config_.vocabSize; }
    std::int64_t maxPositions() const override { return config_.maxPositions; }
    std::int64_t hiddenSize() const override { return config_.dModel; }
    TokenId decoderStartId() const override { return config_.decoderStart; }
    TokenId eosId() const override { return config_.eos; }
    TokenId padId() const override { return config_.pad; }
    std::vector<LinearModule> linears() const override;
    std::vector<VocabularyTable> vocabularyTables() const override;
    const MarianConfig& config() const { return config_; }
    // Bytes of ended requests' caches, sources' keys and values and steps' logits kept for the next ones.
    std::size_t cachedBytes() const;

private:
    MarianConfig config_;
    MarianCpuWeights weights_;
    cpu::MarianForward forward_;
    AdapterViews adapterViews_;
    bool encoderRowStable_ = true;  // the encoder's and the cross keys' and values' products: the same numbers at any row count
    // Kinds apart: a self-attention cache is touched at its first positions only, and a pass's sources written over one
    // would fault on the rest.
    std::shared_ptr<FloatPool> cachePool_;   // self-attention caches
    std::shared_ptr<FloatPool> sourcePool_;  // encoded sources' cross keys and values
    std::shared_ptr<FloatPool> logitsPool_;  // steps' logits, given back once every request has read its rows
};

}  // namespace dragoman
