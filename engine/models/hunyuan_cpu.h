#pragma once
// HunYuanDenseV1 (HY-MT1.5, Hy-MT2 dense) as a CausalLanguageModel on the CPU kernels, without libtorch: the
// forward pass of cpu/hunyuan_forward.h over weights bound as mapped, each request's KV cache in plain memory. It is
// what a HY-MT model runs as on the CPU; bindHunyuanCheckpoint() binds it straight from the checkpoint, with the
// checks and tie rules models/hunyuan.h describes (HunyuanModel, the libtorch layers for devices, builds the same
// from its tensors).
#include "cpu/checkpoint_binder.h"
#include "cpu/hunyuan_forward.h"
#include "io/checkpoint.h"
#include "models/adapter_views.h"
#include "models/causal_lm.h"
#include "models/hunyuan_config.h"

#include <memory>
#include <string>
#include <vector>

namespace dragoman {

// A HunYuan network's weights as the CPU forward reads them, and what they point into.
struct HunyuanCpuWeights {
    cpu::HunyuanWeights weights;
    bool bf16Activations = false;  // a bf16 model (cpu/projection.h)
    bool tiedOutput = true;        // the output layer is the embedding table
    cpu::BoundMemory memory;       // what the views point into
};

// Binds a checkpoint's tensors: every key HunYuanDenseV1 reads present with its shape, 8-bit weights with their
// scales, nothing unexpected left. Throws Error("checkpoint").
HunyuanCpuWeights bindHunyuanCheckpoint(const HunyuanConfig& config, const Checkpoint& checkpoint, const std::string& modelId);

class HunyuanCpuModel : public CausalLanguageModel {
public:
    HunyuanCpuModel(const HunyuanConfig& config, HunyuanCpuWeights weights);

    std::unique_ptr<CausalState> start(std::int64_t maxTokens) const override;
    void copyState(const CausalState& from, CausalState& to) const override;
    Logits forward(CausalState& state, const std::vector<TokenId>& ids, bool allPositions = false) const override;
    Logits stepMany(const std::vector<CausalState*>& states, const std::vector<TokenId>& ids) const override;
    // Hidden states of a fresh run over `ids`: embeddings, each layer's output, the final norm (L + 2 of [T, H]).
    std::vector<std::vector<float>> hiddenStates(const std::vector<TokenId>& ids) const;

    std::int64_t vocabSize() const override { return config_.vocabSize; }
    std::int64_t maxPositions() const override { return config_.maxPositions; }
    std::int64_t weightBytesPerToken() const override { return weightBytesPerToken_; }
    std::vector<LinearModule> linears() const override;
    std::vector<VocabularyTable> vocabularyTables() const override;
    const HunyuanConfig& config() const { return config_; }
    bool bf16Activations() const { return weights_.bf16Activations; }
    const cpu::HunyuanForward& cpuForward() const { return forward_; }

private:
    // The state's adapter as the forward reads it: one view per resident adapter, shared by every state that runs
    // with it (rows of one adapter in a batched step share its products). Null without an adapter.
    const cpu::Adapter* adapterView(CausalState& state) const;

    HunyuanConfig config_;
    HunyuanCpuWeights weights_;
    cpu::HunyuanForward forward_;
    std::int64_t weightBytesPerToken_ = 0;
    AdapterViews adapterViews_;
};

}  // namespace dragoman
