#include "models/hunyuan.h"

#include "kernels/threads.h"
#include "layers/attention.h"
#include "models/config_reader.h"
#include "util/error.h"
#include "util/log.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace dragoman {
namespace {

class HunyuanState : public CausalState {
public:
    std::int64_t length() const override { return length_; }
    std::int64_t capacity() const override { return capacity_; }
    std::vector<torch::Tensor> keys, values;          // per layer [kvHeads, capacity, headDim], float32
    std::vector<torch::Tensor> keyViews, valueViews;  // the same as [1, kvHeads, capacity, headDim] (attention::CacheView)
    std::int64_t length_ = 0, capacity_ = 0;
};

}  // namespace

torch::Tensor hunyuanInverseFrequencies(const HunyuanConfig& config) {
    return Rotary(config.headDim, config.ropeBase()).inverseFrequencies();
}

HunyuanModel::HunyuanModel(const HunyuanConfig& config, const WeightTable& weights, const std::string& modelId, Placement placement)
    : config_(config), placement_(placement) {
    if (!placement_.device.is_cpu()) placement_.libtorchOps = true;
    const auto h = config.hidden, hd = config.headDim;
    const double eps = config.rmsEps;
    // Bound on the CPU as mapped; placed on the device at the end, once every key is checked.
    WeightBinder w(weights);
    embed_ = Embedding(w, "model.embed_tokens.weight", config.vocabSize, h);
    // A bf16 model (as its config says; unsaid: as its embeddings are stored) may take bf16 prompt products.
    placement_.bf16Activations = config.dtype.empty() ? embed_.weight().scalar_type() == torch::kBFloat16 : config.dtype == "bfloat16";
    finalNorm_ = RmsNorm(w, "model.norm.weight", h, eps);
    const bool storesHead = weights.find("lm_head.weight") != weights.end();
    if (config.tieWordEmbeddings == true) {
        lmHead_ = Linear(embed_.weight(), {}, embed_.scale(), placement_);
        w.ignore("lm_head.weight");  // some exports store the tied copy; transformers does not read it
        w.ignore("lm_head.weight_scale");
    } else if (storesHead) {
        lmHead_ = Linear(w, "lm_head.", config.vocabSize, h, false, placement_);
    } else {
        // Untied (or unstated) with no output layer stored: transformers would start from random weights,
        // which is never what the export meant. The embeddings are the output layer the model was made with.
        if (config.tieWordEmbeddings == false)
            log::logger().warn("{}: tie_word_embeddings is false but there is no lm_head.weight; using the embeddings", modelId);
        lmHead_ = Linear(embed_.weight(), {}, embed_.scale(), placement_);
    }
    for (std::int64_t i = 0; i < config.layers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        HunyuanLayer l;
        l.inputNorm = RmsNorm(w, p + "input_layernorm.weight", h, eps);
        l.q = Linear(w, p + "self_attn.q_proj.", config.heads * hd, h, false, placement_);
        l.k = Linear(w, p + "self_attn.k_proj.", config.kvHeads * hd, h, false, placement_);
        l.v = Linear(w, p + "self_attn.v_proj.", config.kvHeads * hd, h, false, placement_);
        l.o = Linear(w, p + "self_attn.o_proj.", h, config.heads * hd, false, placement_);
        if (config.qkNorm) {
            l.qNorm = RmsNorm(w, p + "self_attn.query_layernorm.weight", hd, eps);
            l.kNorm = RmsNorm(w, p + "self_attn.key_layernorm.weight", hd, eps);
        }
        l.postNorm = RmsNorm(w, p + "post_attention_layernorm.weight", h, eps);
        l.gate = Linear(w, p + "mlp.gate_proj.", config.intermediate, h, false, placement_);
        l.up = Linear(w, p + "mlp.up_proj.", config.intermediate, h, false, placement_);
        l.down = Linear(w, p + "mlp.down_proj.", h, config.intermediate, false, placement_);
        layers_.push_back(std::move(l));
    }
    w.finish(modelId);
    rotary_ = Rotary(hd, config.ropeBase());
    for (const auto& l : layers_)
        weightBytesPerToken_ += l.inputNorm.bytes() + l.qNorm.bytes() + l.kNorm.bytes() + l.postNorm.bytes() + l.q.bytes() + l.k.bytes() +
                                l.v.bytes() + l.o.bytes() + l.gate.bytes() + l.up.bytes() + l.down.bytes();
    weightBytesPerToken_ += lmHead_.bytes() + finalNorm_.bytes();
    numberSlots(linears());
    if (placement_.onCpuKernels()) return;
    // Off the engine's CPU kernels: one copy to device memory (none on the CPU), in the checkpoint's dtype;
    // the tied output layer stays the same tensor as the embeddings.
    const bool tied = lmHead_.weight().is_same(embed_.weight());
    embed_.place(placement_);
    if (tied)
        lmHead_ = Linear(embed_.weight(), {}, embed_.scale(), placement_);
    else
        lmHead_.place(placement_);
    finalNorm_.place(placement_);
    rotary_.place(placement_);
    for (auto& l : layers_) {
        for (auto* norm : {&l.inputNorm, &l.qNorm, &l.kNorm, &l.postNorm})
            norm->place(placement_);
        for (auto* linear : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down})
            linear->place(placement_);
    }
}

std::vector<VocabularyTable> HunyuanModel::vocabularyTables() const {
    // A bound lm_head has its name; a tied (or missing) one reads the embeddings, and a stored copy repeats them.
    if (lmHead_.name().empty()) return {{"model.embed_tokens", {"lm_head"}}};
    return {{"model.embed_tokens", {}}, {lmHead_.name(), {}}};
}

std::vector<const Linear*> HunyuanModel::linears() const {
    std::vector<const Linear*> all;
    for (const auto& l : layers_)
        for (const auto* linear : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down})
            all.push_back(linear);
    return all;
}

std::unique_ptr<CausalState> HunyuanModel::start(std::int64_t maxTokens) const {
    auto state = std::make_unique<HunyuanState>();
    state->capacity_ = std::max<std::int64_t>(1, std::min(maxTokens, config_.maxPositions));
    for (std::int64_t i = 0; i < config_.layers; ++i) {
        state->keys.push_back(torch::empty({config_.kvHeads, state->capacity_, config_.headDim},
                                           torch::TensorOptions().dtype(torch::kFloat32).device(placement_.device)));
        state->values.push_back(torch::empty_like(state->keys.back()));
        state->keyViews.push_back(state->keys.back().unsqueeze(0));
        state->valueViews.push_back(state->values.back().unsqueeze(0));
    }
    return state;
}

void HunyuanModel::copyState(const CausalState& from, CausalState& to) const {
    const auto& source = static_cast<const HunyuanState&>(from);
    auto& target = static_cast<HunyuanState&>(to);
    if (source.length_ > target.capacity_)
        throw Error("internal",
                    "a cache of " + std::to_string(target.capacity_) + " positions cannot take " + std::to_string(source.length_));
    for (std::size_t i = 0; i < source.keys.size(); ++i) {
        target.keys[i].narrow(1, 0, source.length_).copy_(source.keys[i].narrow(1, 0, source.length_));
        target.values[i].narrow(1, 0, source.length_).copy_(source.values[i].narrow(1, 0, source.length_));
    }
    target.length_ = source.length_;
}

torch::Tensor HunyuanModel::attendProjected(std::size_t index, CausalState& base, const HunyuanLayer& l, const torch::Tensor& qp,
                                            const torch::Tensor& kp, const torch::Tensor& vp, const Rotary::Angles& angles) const {
    auto& state = static_cast<HunyuanState&>(base);
    const auto t = qp.size(0), heads = config_.heads, kvHeads = config_.kvHeads, hd = config_.headDim;
    const auto start = state.length_, total = start + t;
    auto q = rotary_(qp.view({t, heads, hd}).transpose(0, 1), angles);  // [H, T, hd]
    auto k = rotary_(kp.view({t, kvHeads, hd}).transpose(0, 1), angles);
    auto v = vp.view({t, kvHeads, hd}).transpose(0, 1);
    if (config_.qkNorm) {  // after RoPE, as transformers' HunYuanDenseV1Attention
        q = l.qNorm(q);
        k = l.kNorm(k);
    }
    state.keys[index].narrow(1, start, t).copy_(k);
    state.values[index].narrow(1, start, t).copy_(v);
    const auto keys = state.keys[index].narrow(1, 0, total), values = state.values[index].narrow(1, 0, total);
    if (t == 1 && placement_.onCpuKernels())  // a decoding step: one pass of the engine's attention kernel, heads merged
        return attention::oneQuery(q.reshape({1, heads * hd}), keys.unsqueeze(0), values.unsqueeze(0), heads);
    return attention::causalPrompt(q, keys, values, start, placement_.onCpuKernels());
}

torch::Tensor HunyuanModel::attendStep(std::size_t index, const std::vector<CausalState*>& states, const HunyuanLayer& l,
                                       const torch::Tensor& qp, const torch::Tensor& kp, const torch::Tensor& vp,
                                       const std::vector<Rotary::Angles>& angles) const {
    const auto rows = qp.size(0), heads = config_.heads, kvHeads = config_.kvHeads, hd = config_.headDim;
    if (!placement_.onCpuKernels()) {
        std::vector<torch::Tensor> contexts;
        for (std::int64_t b = 0; b < rows; ++b)
            contexts.push_back(attendProjected(index, *states[static_cast<std::size_t>(b)], l, qp.narrow(0, b, 1), kp.narrow(0, b, 1),
                                               vp.narrow(0, b, 1), angles[static_cast<std::size_t>(b)]));
        return torch::cat(contexts);
    }
    // Row for row what attendProjected does for one position: rotary, then the q/k norms (row-wise kernels, so
    // all rows in one call each), the new key and value into each sequence's cache, then one attention call.
    auto q = rotary_.eachRow(qp.contiguous(), heads, angles);
    auto k = rotary_.eachRow(kp.contiguous(), kvHeads, angles);
    if (config_.qkNorm) {
        q = l.qNorm(q.view({rows * heads, hd})).view({rows, heads * hd});
        k = l.kNorm(k.view({rows * kvHeads, hd})).view({rows, kvHeads * hd});
    }
    const auto v = vp.contiguous();
    const float *newKeys = k.data_ptr<float>(), *newValues = v.data_ptr<float>();
    std::vector<attention::CacheView> caches;
    for (std::int64_t b = 0; b < rows; ++b) {
        auto& state = static_cast<HunyuanState&>(*states[static_cast<std::size_t>(b)]);
        const auto at = state.length_;
        float *keys = state.keys[index].data_ptr<float>(), *values = state.values[index].data_ptr<float>();
        for (std::int64_t h = 0; h < kvHeads; ++h) {
            const auto from = (b * kvHeads + h) * hd, to = (h * state.capacity_ + at) * hd;
            std::copy_n(newKeys + from, hd, keys + to);
            std::copy_n(newValues + from, hd, values + to);
        }
        caches.push_back({&state.keyViews[index], &state.valueViews[index], 1, at + 1});
    }
    return attention::oneQueryEach(q, caches, heads);
}

torch::Tensor HunyuanModel::attention(const HunyuanLayer& l, std::size_t index, CausalState& state, const torch::Tensor& x,
                                      const Rotary::Angles& angles) const {
    const auto* lora = state.adapter.get();
    const auto qkv = Linear::many(x, {&l.q, &l.k, &l.v}, lora);
    return l.o(attendProjected(index, state, l, qkv[0], qkv[1], qkv[2], angles), lora);
}

torch::Tensor HunyuanModel::run(CausalState& base, const torch::Tensor& ids, std::vector<torch::Tensor>* hidden) const {
    auto& state = static_cast<HunyuanState&>(base);
    const auto t = ids.size(0);
    if (t == 0) throw Error("input", "no tokens to run");
    if (state.length_ + t > state.capacity_)
        throw Error("input", "sequence of " + std::to_string(state.length_ + t) + " tokens exceeds the cache of " +
                                 std::to_string(state.capacity_) + " (the model allows " + std::to_string(config_.maxPositions) + ")");
    if (ids.min().item<std::int64_t>() < 0 || ids.max().item<std::int64_t>() >= config_.vocabSize)
        throw Error("input", "a token id lies outside the vocabulary of " + std::to_string(config_.vocabSize));
    const auto angles = rotary_.at(state.length_, t);
    auto x = embed_(ids);  // [T, H]
    if (hidden) hidden->push_back(x);
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        if (t > 1 && state.interrupted && state.interrupted()) throw Cancelled("prompt stopped");
        const auto& l = layers_[i];
        x = x + attention(l, i, state, l.inputNorm(x), angles);
        const auto gateUp = Linear::many(l.postNorm(x), {&l.gate, &l.up}, state.adapter.get());
        x = x + l.down(torch::silu(gateUp[0]) * gateUp[1], state.adapter.get());
        if (hidden) hidden->push_back(x);
    }
    state.length_ += t;
    x = finalNorm_(x);
    if (hidden) hidden->push_back(x);
    return x;
}

torch::Tensor HunyuanModel::forward(CausalState& state, const torch::Tensor& ids, bool allPositions) const {
    auto x = run(state, ids, nullptr);
    // Logits come back to the CPU, where search and sampling run (a no-op there).
    if (!allPositions) return lmHead_(x.narrow(0, x.size(0) - 1, 1)).view({config_.vocabSize}).to(torch::kCPU);
    return lmHead_(x).to(torch::kCPU);
}

torch::Tensor HunyuanModel::stepMany(const std::vector<CausalState*>& states, const std::vector<TokenId>& ids) const {
    const auto rows = static_cast<std::int64_t>(states.size());
    if (rows == 0 || ids.size() != states.size()) throw Error("input", "a batched step feeds one token to each sequence");
    std::vector<HunyuanState*> sequences;
    std::vector<Rotary::Angles> angles;
    std::vector<const LoraSet*> adapters;
    for (std::size_t b = 0; b < states.size(); ++b) {
        auto& state = static_cast<HunyuanState&>(*states[b]);
        if (state.length_ + 1 > state.capacity_)
            throw Error("input", "sequence of " + std::to_string(state.length_ + 1) + " tokens exceeds the cache of " +
                                     std::to_string(state.capacity_));
        if (ids[b] < 0 || ids[b] >= config_.vocabSize)
            throw Error("input", "a token id lies outside the vocabulary of " + std::to_string(config_.vocabSize));
        sequences.push_back(&state);
        angles.push_back(rotary_.at(state.length_, 1));
        adapters.push_back(state.adapter.get());
    }
    auto x = embed_(torch::tensor(ids, torch::kInt64));  // [B, H]
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        const auto& l = layers_[i];
        const auto h = l.inputNorm(x);
        const auto q = l.q(h, adapters), k = l.k(h, adapters), v = l.v(h, adapters);
        x = x + l.o(attendStep(i, states, l, q, k, v, angles), adapters);
        const auto post = l.postNorm(x);
        x = x + l.down(torch::silu(l.gate(post, adapters)) * l.up(post, adapters), adapters);
    }
    for (auto* state : sequences)
        state->length_ += 1;
    return lmHead_(finalNorm_(x)).to(torch::kCPU);
}

torch::Tensor HunyuanModel::hiddenStates(const torch::Tensor& ids) const {
    auto state = start(ids.size(0));
    std::vector<torch::Tensor> hidden;
    run(*state, ids, &hidden);
    return torch::stack(hidden).to(torch::kCPU);
}

}  // namespace dragoman
