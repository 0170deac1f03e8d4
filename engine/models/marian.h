#pragma once
// MarianMTModel (Helsinki-NLP OPUS-MT) as transformers defines it: post-LN encoder-decoder, embeddings
// scaled by sqrt(d_model), static sinusoidal positions (computed, not loaded), a shared embedding tied to
// the output layer, plus final_logits_bias. Each layer is a small struct built from the checkpoint's
// tensors under its own key prefix, so names match the file exactly.
//
// This is the libtorch model: what tools/train trains (forwardBatch, differentiable) and the reference path
// (OpenOptions::device "libtorch"). Translation runs models/marian_cpu.h's MarianCpuModel, the same numbers on the
// engine's kernels without libtorch.
#include "decode/cache_pool.h"
#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/norm.h"
#include "models/batched_decoder.h"
#include "models/encoder_decoder.h"
#include "models/marian_config.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace dragoman {

// Sinusoids as MarianSinusoidalPositionalEmbedding: angle p / 10000^(2*(j//2)/d) in double, sin of even j in the
// first half, cos of odd j in the second, then float32.
torch::Tensor marianSinusoidalPositions(std::int64_t positions, std::int64_t dim);

// q, k, v and output projections with biases, under the checkpoint's names.
struct MarianAttention {
    Linear q, k, v, o;
    MarianAttention() = default;
    MarianAttention(WeightBinder& w, const std::string& prefix, std::int64_t d, Placement placement);
};

struct MarianFeedForward {
    Linear fc1, fc2;
    MarianFeedForward() = default;
    MarianFeedForward(WeightBinder& w, const std::string& prefix, std::int64_t d, std::int64_t ffn, Placement placement);
};

struct MarianEncoderLayer {
    MarianAttention selfAttn;
    LayerNorm selfAttnNorm, finalNorm;
    MarianFeedForward ffn;
};

struct MarianDecoderLayer {
    MarianAttention selfAttn, crossAttn;
    LayerNorm selfAttnNorm, crossAttnNorm, finalNorm;
    MarianFeedForward ffn;
};

class MarianModel : public EncoderDecoderModel, public BatchedDecoder {
public:
    // Binds the weights (zero-copy views) and checks the keys. Throws Error("config"/"checkpoint").
    MarianModel(const MarianConfig& config, const WeightTable& weights, const std::string& modelId);
    // The same through a binder: a recording one yields the parameter layout (MarianConfig::parameterShapes).
    MarianModel(const MarianConfig& config, WeightBinder weights, const std::string& modelId);

    torch::Tensor encode(const std::vector<TokenId>& sourceIds, const LoraSet* adapter = nullptr) const override;
    // All encoder hidden states: embeddings, then each layer's output ([layers + 1, S, d]).
    torch::Tensor encodeAllLayers(const std::vector<TokenId>& sourceIds) const;
    std::shared_ptr<const SourceMemory> remember(const torch::Tensor& encoded, const LoraSet* adapter = nullptr) const override;
    using EncoderDecoderModel::startDecoding;
    std::unique_ptr<DecoderState> startDecoding(std::shared_ptr<const SourceMemory> source, std::int64_t batch, std::int64_t maxSteps,
                                                std::shared_ptr<const LoraSet> adapter = nullptr) const override;
    std::vector<LinearModule> linears() const override { return modulesOf(layerLinears()); }
    std::vector<VocabularyTable> vocabularyTables() const override;
    torch::Tensor step(DecoderState& state, const torch::Tensor& tokens) const override;
    void reorder(DecoderState& state, const torch::Tensor& beams) const override;
    torch::Tensor stepMany(const std::vector<DecoderState*>& states, const std::vector<torch::Tensor>& tokens) const override;
    std::vector<torch::Tensor> encodeMany(const std::vector<std::vector<TokenId>>& sources, const LoraSet* adapter) const override;
    std::vector<std::shared_ptr<const SourceMemory>> rememberMany(const std::vector<torch::Tensor>& encoded,
                                                                  const LoraSet* adapter) const override;

    // Teacher-forced logits [B, T, V] for a padded batch: source [B, S] ids with sourceValid [B, S] (false on
    // padding), decoder inputs targetIn [B, T] (start token first). The same layers as serving, with dropout
    // when training; differentiable when the bound weights require gradients (tools/train builds on it).
    torch::Tensor forwardBatch(const torch::Tensor& source, const torch::Tensor& sourceValid, const torch::Tensor& targetIn,
                               double dropout = 0.0) const;

    std::int64_t vocabSize() const override { return config_.vocabSize; }
    std::int64_t maxPositions() const override { return config_.maxPositions; }
    std::int64_t hiddenSize() const override { return config_.dModel; }
    TokenId decoderStartId() const override { return config_.decoderStart; }
    TokenId eosId() const override { return config_.eos; }
    TokenId padId() const override { return config_.pad; }
    const MarianConfig& config() const { return config_; }
    // Bytes of ended sequences' caches kept for the next ones.
    std::size_t cachedBytes() const { return cachePool_->bytesHeld(); }

private:
    std::vector<const Linear*> layerLinears() const;  // by slot
    double embeddingScale() const;                    // sqrt(d_model) where the config scales embeddings, else 1
    torch::Tensor embed(const torch::Tensor& ids, std::int64_t firstPosition) const;
    // ids [R] at positions [R] (int64): [R, d], each row as embed() gives it.
    torch::Tensor embedAt(const torch::Tensor& ids, const torch::Tensor& positions) const;
    // The sources' rows one after another through every encoder layer ([sum S_i, d]); attention stays within each
    // source (lengths). With `all`, each layer's input and the last output too.
    torch::Tensor encodeRows(const std::vector<std::vector<TokenId>>& sources, std::vector<std::int64_t>& lengths,
                             std::vector<torch::Tensor>* all, const LoraSet* lora) const;
    torch::Tensor encoderRowsLayer(const MarianEncoderLayer& layer, const torch::Tensor& x, const std::vector<std::int64_t>& lengths,
                                   const LoraSet* lora) const;
    bool encoderRowStable(const LoraSet* lora) const;
    torch::Tensor encoderLayer(const MarianEncoderLayer& layer, const torch::Tensor& x, const torch::Tensor& mask, double dropout,
                               const LoraSet* lora = nullptr) const;
    // Cross-attention (given its queries and the source keys/values) and the feed-forward block.
    torch::Tensor decoderLayerTail(const MarianDecoderLayer& layer, const torch::Tensor& x, const torch::Tensor& crossQ,
                                   const torch::Tensor& crossK, const torch::Tensor& crossV, const torch::Tensor& crossMask,
                                   double dropout) const;
    torch::Tensor feedForward(const MarianFeedForward& ffn, const torch::Tensor& x, const LoraSet* lora = nullptr) const;
    torch::Tensor feedForward(const MarianFeedForward& ffn, const torch::Tensor& x, const std::vector<const LoraSet*>& adapters) const;

    MarianConfig config_;
    Embedding shared_;
    Linear output_;  // the shared embeddings, plus final_logits_bias
    torch::Tensor positions_;
    std::vector<MarianEncoderLayer> encoder_;
    std::vector<MarianDecoderLayer> decoder_;
    // Self-attention caches of ended sequences, for the next ones (shared with the states, which hand theirs back).
    // 64 MiB: 27 of the bundled model's sequences (2.4 MB each at its 256 steps), 5 of opus-mt-base's.
    std::shared_ptr<CachePool> cachePool_ = std::make_shared<CachePool>(std::size_t{64} << 20);
};

}  // namespace dragoman
