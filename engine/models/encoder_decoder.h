#pragma once
// What decoding needs from an encoder-decoder model. The model is read-only and shared; everything that
// changes while generating lives in a DecoderState owned by one request.
#include "layers/embedding.h"
#include "layers/lora.h"
#include "models/linear_module.h"
#include "models/seq2seq.h"
#include "models/vocabulary_table.h"
#include "text/tokenizer.h"

#include <torch/types.h>

#include <memory>
#include <vector>

namespace dragoman {

class Linear;

class EncoderDecoderModel {
public:
    virtual ~EncoderDecoderModel() = default;

    // [S, d] for one source sequence, with the request's adapter (may be null).
    virtual torch::Tensor encode(const std::vector<TokenId>& sourceIds, const LoraSet* adapter = nullptr) const = 0;
    // The decoder's memory of `encoded` under the adapter (may be null) the decoding will use.
    virtual std::shared_ptr<const SourceMemory> remember(const torch::Tensor& encoded, const LoraSet* adapter = nullptr) const = 0;
    // A fresh KV cache for `batch` hypotheses over a remembered source, with room for `maxSteps` decoder tokens;
    // the adapter (may be null, and the one `source` was remembered with) applies to every step. Cheap: the
    // source's products were made by remember().
    virtual std::unique_ptr<DecoderState> startDecoding(std::shared_ptr<const SourceMemory> source, std::int64_t batch,
                                                        std::int64_t maxSteps, std::shared_ptr<const LoraSet> adapter = nullptr) const = 0;
    // The same from the encoder's output.
    std::unique_ptr<DecoderState> startDecoding(const torch::Tensor& encoded, std::int64_t batch, std::int64_t maxSteps,
                                                std::shared_ptr<const LoraSet> adapter = nullptr) const {
        auto source = remember(encoded, adapter.get());
        return startDecoding(std::move(source), batch, maxSteps, std::move(adapter));
    }
    // Feeds one token per hypothesis ([B] int64) and returns the next-token logits [B, V] (float32).
    virtual torch::Tensor step(DecoderState& state, const torch::Tensor& tokens) const = 0;
    // Keeps hypotheses `beams` ([B] int64 indices into the current batch), in that order.
    virtual void reorder(DecoderState& state, const torch::Tensor& beams) const = 0;

    virtual std::int64_t vocabSize() const = 0;
    virtual std::int64_t maxPositions() const = 0;
    virtual std::int64_t hiddenSize() const = 0;  // d_model
    virtual TokenId decoderStartId() const = 0;
    virtual TokenId eosId() const = 0;
    virtual TokenId padId() const = 0;
    // The model's Linear layers by slot (Linear::slot()): what adapters bind to, by module name.
    virtual std::vector<LinearModule> linears() const = 0;
    // Its embedding and output tables (VocabularyTable).
    virtual std::vector<VocabularyTable> vocabularyTables() const = 0;
};

}  // namespace dragoman
