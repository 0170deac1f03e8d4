#pragma once
// HunYuanDenseV1ForCausalLM (Tencent HY-MT1.5, model_type hunyuan_v1_dense) as transformers defines it:
// pre-norm decoder layers with RMSNorm computed in float32, GQA attention with an explicit head_dim,
// rotate-half RoPE whose base is rope_theta * alpha^(head_dim / (head_dim - 2)) (rope_scaling, or
// rope_parameters as transformers 5 saves it: dynamic with alpha),
// per-head RMSNorm of q and k applied after RoPE, SiLU-gated MLP, and the output layer tied to the
// embeddings when lm_head.weight is absent. On the CPU the weights are used as mapped (bf16 stays bf16); on a
// CUDA device they are copied there once (layers/placement.h).
#include "layers/embedding.h"
#include "layers/linear.h"
#include "layers/norm.h"
#include "layers/rotary.h"
#include "models/causal_lm.h"
#include "models/hunyuan_config.h"
#include "models/hunyuan_cpu.h"

#include <nlohmann/json.hpp>

#include <map>
#include <mutex>
#include <optional>

namespace dragoman {

// inv_freq as transformers computes it: 1 / base^(arange(0, head_dim, 2) / head_dim) in float32.
torch::Tensor hunyuanInverseFrequencies(const HunyuanConfig& config);

struct HunyuanLayer {
    RmsNorm inputNorm, qNorm, kNorm, postNorm;
    Linear q, k, v, o, gate, up, down;
};

class HunyuanModel : public CausalLanguageModel {
public:
    // Binds the weights as mapped and checks the keys; off the CPU, copies them to the device (placement.h).
    // Throws Error("config"/"checkpoint").
    HunyuanModel(const HunyuanConfig& config, const WeightTable& weights, const std::string& modelId, Placement placement = {});

    std::unique_ptr<CausalState> start(std::int64_t maxTokens) const override;
    void copyState(const CausalState& from, CausalState& to) const override;
    Logits forward(CausalState& state, const std::vector<TokenId>& ids, bool allPositions = false) const override;
    // The projections, norms and MLP run on all rows at once (each weight read once per step), and so do rotary
    // (each row at its own position), the q/k norms and attention (each row over its own cache).
    Logits stepMany(const std::vector<CausalState*>& states, const std::vector<TokenId>& ids) const override;
    // forward() for ids ([T] int64) as a tensor: [T, V] when allPositions, else [V].
    torch::Tensor forward(CausalState& state, const torch::Tensor& ids, bool allPositions = false) const;
    // Hidden states of a fresh run over `ids`: embeddings, each layer's output, the final norm ([L + 2, T, H]).
    torch::Tensor hiddenStates(const torch::Tensor& ids) const;

    std::int64_t vocabSize() const override { return config_.vocabSize; }
    std::int64_t maxPositions() const override { return config_.maxPositions; }
    std::int64_t weightBytesPerToken() const override { return weightBytesPerToken_; }
    std::vector<LinearModule> linears() const override;
    std::vector<VocabularyTable> vocabularyTables() const override;
    const HunyuanConfig& config() const { return config_; }
    const Placement& placement() const { return placement_; }
    // The forward its CPU path runs (null off the CPU kernels).
    const cpu::HunyuanForward* cpuForward() const { return cpu_ ? &cpu_->cpuForward() : nullptr; }

private:
    torch::Tensor run(CausalState& state, const torch::Tensor& ids, std::vector<torch::Tensor>* hidden) const;
    // The attention of one sequence's new positions from their q/k/v projections ([t, heads * hd], [t, kvHeads *
    // hd] x 2), written into its cache: the context [t, heads * hd] before the output projection.
    torch::Tensor attendProjected(std::size_t index, CausalState& state, const HunyuanLayer& layer, const torch::Tensor& q,
                                  const torch::Tensor& k, const torch::Tensor& v, const Rotary::Angles& angles) const;
    // A batched step's attention: one new position per sequence (row b of q/k/v is states[b]'s), each written into
    // its own cache; the contexts [rows, heads * hd], each what attendProjected gives that sequence alone.
    torch::Tensor attendStep(std::size_t index, const std::vector<CausalState*>& states, const HunyuanLayer& layer, const torch::Tensor& q,
                             const torch::Tensor& k, const torch::Tensor& v, const std::vector<Rotary::Angles>& angles) const;
    torch::Tensor attention(const HunyuanLayer& layer, std::size_t index, CausalState& state, const torch::Tensor& x,
                            const Rotary::Angles& angles) const;
    std::vector<const Linear*> layerLinears() const;  // by slot
    // The bound tensors as the CPU forward reads them (views into this model's tensors).
    HunyuanCpuWeights bindCpuWeights();

    HunyuanConfig config_;
    Placement placement_;
    Embedding embed_;
    RmsNorm finalNorm_;
    Linear lmHead_;
    Rotary rotary_;
    std::vector<HunyuanLayer> layers_;
    std::int64_t weightBytesPerToken_ = 0;
    // On the CPU kernels every call runs here, over the tensors above; off them (a CUDA device,
    // Placement::libtorchOps) the layers above run as libtorch operations.
    std::unique_ptr<const HunyuanCpuModel> cpu_;
    std::vector<torch::Tensor> widened_;  // float32 copies of weights the kernels cannot read as stored (float16)
};

}  // namespace dragoman
