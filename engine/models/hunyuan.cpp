#include "models/hunyuan.h"

#include "cpu/hunyuan_forward.h"
#include "decode/logits_tensor.h"
#include "kernels/threads.h"
#include "layers/attention.h"
#include "layers/torch_device.h"
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
    std::int64_t length() const override { return cache.length; }
    std::int64_t capacity() const override { return cache.capacity; }
    std::vector<torch::Tensor> keys, values;  // per layer [kvHeads, capacity, headDim], float32
    cpu::KvCache cache;                       // its length and capacity (the memory is in the tensors)
};

// A norm's weight, a matrix, as the CPU kernels read them: as mapped where they can (float32 or bf16; 8-bit codes
// with their scales), otherwise (float16) a float32 copy kept in `kept`.
torch::Tensor kernelReadable(const torch::Tensor& t, std::vector<torch::Tensor>& kept) {
    const auto type = t.scalar_type();
    const bool readable = type == torch::kFloat32 || type == torch::kBFloat16 || type == torch::kInt8 || type == torch::kUInt8;
    if (readable && t.is_contiguous()) return t;
    kept.push_back(t.to(torch::kFloat32).contiguous());
    return kept.back();
}

cpu::NormWeight normWeight(const RmsNorm& norm, std::vector<torch::Tensor>& kept) {
    if (!norm.weight().defined()) return {};
    auto w = norm.weight();
    const bool readable = (w.scalar_type() == torch::kBFloat16 || w.scalar_type() == torch::kFloat32) && w.is_contiguous();
    if (!readable) {
        kept.push_back(w.to(torch::kFloat32).contiguous());
        w = kept.back();
    }
    return {w.data_ptr(), w.scalar_type() == torch::kBFloat16 ? cpu::Dtype::BF16 : cpu::Dtype::F32};
}

}  // namespace

torch::Tensor hunyuanInverseFrequencies(const HunyuanConfig& config) {
    return Rotary(config.headDim, config.ropeBase()).inverseFrequencies();
}

HunyuanModel::HunyuanModel(const HunyuanConfig& config, const WeightTable& weights, const std::string& modelId, Placement placement)
    : config_(config), placement_(placement) {
    if (!placement_.onCpu()) placement_.libtorchOps = true;
    const auto h = config.hidden, hd = config.headDim;
    const double eps = config.rmsEps;
    // Bound on the CPU as mapped; placed on the device at the end, once every key is checked.
    WeightBinder w(weights);
    embed_ = Embedding(w, "model.embed_tokens.weight", config.vocabSize, h);
    // A bf16 model (as its config says; unsaid: as its embeddings are stored) may take bf16 prompt products.
    placement_.bf16Activations = config.computesInBf16(embed_.weight().scalar_type() == torch::kBFloat16);
    placement_.int8Activations = config.int8Activations;
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
    numberSlots(layerLinears());
    if (placement_.onCpuKernels()) {
        cpu_ = std::make_unique<const HunyuanCpuModel>(config_, bindCpuWeights());
        return;
    }
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

std::vector<LinearModule> HunyuanModel::linears() const {
    return modulesOf(layerLinears());
}

std::vector<const Linear*> HunyuanModel::layerLinears() const {
    std::vector<const Linear*> all;
    for (const auto& l : layers_)
        for (const auto* linear : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down})
            all.push_back(linear);
    return all;
}

std::unique_ptr<CausalState> HunyuanModel::start(std::int64_t maxTokens) const {
    if (cpu_) return cpu_->start(maxTokens);
    // Its caches are inference tensors: made and updated only in InferenceMode, which each call enters itself.
    c10::InferenceMode guard;
    auto state = std::make_unique<HunyuanState>();
    state->cache.capacity = std::max<std::int64_t>(1, std::min(maxTokens, config_.maxPositions));
    for (std::int64_t i = 0; i < config_.layers; ++i) {
        state->keys.push_back(torch::empty({config_.kvHeads, state->cache.capacity, config_.headDim},
                                           torch::TensorOptions().dtype(torch::kFloat32).device(torchDevice(placement_))));
        state->values.push_back(torch::empty_like(state->keys.back()));
    }
    return state;
}

void HunyuanModel::copyState(const CausalState& from, CausalState& to) const {
    if (cpu_) return cpu_->copyState(from, to);
    c10::InferenceMode guard;
    const auto& source = static_cast<const HunyuanState&>(from);
    auto& target = static_cast<HunyuanState&>(to);
    const auto length = source.cache.length;
    if (length > target.cache.capacity)
        throw Error("internal", "a cache of " + std::to_string(target.cache.capacity) + " positions cannot take " + std::to_string(length));
    for (std::size_t i = 0; i < source.keys.size(); ++i) {
        target.keys[i].narrow(1, 0, length).copy_(source.keys[i].narrow(1, 0, length));
        target.values[i].narrow(1, 0, length).copy_(source.values[i].narrow(1, 0, length));
    }
    target.cache.length = length;
}

HunyuanCpuWeights HunyuanModel::bindCpuWeights() {
    const auto matrix = [&](const torch::Tensor& weight, const torch::Tensor& scale) {
        auto m = ops::matrixOf(kernelReadable(weight, widened_), scale);
        m.int8Activations = placement_.int8Activations && m.type == cpu::Dtype::I8;
        return m;
    };
    HunyuanCpuWeights bound;
    bound.bf16Activations = placement_.bf16Activations;
    bound.tiedOutput = lmHead_.name().empty();
    auto& w = bound.weights;
    w.embeddings = matrix(embed_.weight(), embed_.scale());
    w.finalNorm = normWeight(finalNorm_, widened_);
    // A tied output layer reads the embeddings' own table (and its one float32 copy, where it needs one).
    w.output = lmHead_.weight().is_same(embed_.weight()) ? w.embeddings : matrix(lmHead_.weight(), lmHead_.scale());
    for (const auto& l : layers_) {
        cpu::HunyuanLayerWeights c;
        c.inputNorm = normWeight(l.inputNorm, widened_);
        c.qNorm = normWeight(l.qNorm, widened_);
        c.kNorm = normWeight(l.kNorm, widened_);
        c.postNorm = normWeight(l.postNorm, widened_);
        c.q = matrix(l.q.weight(), l.q.scale());
        c.k = matrix(l.k.weight(), l.k.scale());
        c.v = matrix(l.v.weight(), l.v.scale());
        c.o = matrix(l.o.weight(), l.o.scale());
        c.gate = matrix(l.gate.weight(), l.gate.scale());
        c.up = matrix(l.up.weight(), l.up.scale());
        c.down = matrix(l.down.weight(), l.down.scale());
        w.layers.push_back(c);
    }
    return bound;  // points into this model's tensors
}

torch::Tensor HunyuanModel::attendProjected(std::size_t index, CausalState& base, const HunyuanLayer& l, const torch::Tensor& qp,
                                            const torch::Tensor& kp, const torch::Tensor& vp, const Rotary::Angles& angles) const {
    auto& state = static_cast<HunyuanState&>(base);
    const auto t = qp.size(0), heads = config_.heads, kvHeads = config_.kvHeads, hd = config_.headDim;
    const auto start = state.cache.length, total = start + t;
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
    return attention::causalPrompt(q, keys, values, start, false);
}

torch::Tensor HunyuanModel::attendStep(std::size_t index, const std::vector<CausalState*>& states, const HunyuanLayer& l,
                                       const torch::Tensor& qp, const torch::Tensor& kp, const torch::Tensor& vp,
                                       const std::vector<Rotary::Angles>& angles) const {
    std::vector<torch::Tensor> contexts;
    for (std::int64_t b = 0; b < qp.size(0); ++b)
        contexts.push_back(attendProjected(index, *states[static_cast<std::size_t>(b)], l, qp.narrow(0, b, 1), kp.narrow(0, b, 1),
                                           vp.narrow(0, b, 1), angles[static_cast<std::size_t>(b)]));
    return torch::cat(contexts);
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
    if (state.cache.length + t > state.cache.capacity)
        throw Error("input", "sequence of " + std::to_string(state.cache.length + t) + " tokens exceeds the cache of " +
                                 std::to_string(state.cache.capacity) + " (the model allows " + std::to_string(config_.maxPositions) + ")");
    if (ids.min().item<std::int64_t>() < 0 || ids.max().item<std::int64_t>() >= config_.vocabSize)
        throw Error("input", "a token id lies outside the vocabulary of " + std::to_string(config_.vocabSize));
    const auto angles = rotary_.at(state.cache.length, t);
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
    state.cache.length += t;
    x = finalNorm_(x);
    if (hidden) hidden->push_back(x);
    return x;
}

Logits HunyuanModel::forward(CausalState& base, const std::vector<TokenId>& ids, bool allPositions) const {
    if (cpu_) return cpu_->forward(base, ids, allPositions);
    c10::InferenceMode guard;
    auto x = run(base, torch::tensor(ids, torch::kInt64), nullptr);
    // Logits come back to the CPU, where search and sampling run.
    return logitsOf(lmHead_(allPositions ? x : x.narrow(0, x.size(0) - 1, 1)));
}

torch::Tensor HunyuanModel::forward(CausalState& state, const torch::Tensor& ids, bool allPositions) const {
    const auto flat = ids.to(torch::kCPU, torch::kInt64).contiguous().view({-1});
    auto logits = tensorOf(
        forward(state, std::vector<TokenId>(flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()), allPositions));
    return allPositions ? logits : logits.view({config_.vocabSize});
}

Logits HunyuanModel::stepMany(const std::vector<CausalState*>& states, const std::vector<TokenId>& ids) const {
    const auto rows = static_cast<std::int64_t>(states.size());
    if (rows == 0 || ids.size() != states.size()) throw Error("input", "a batched step feeds one token to each sequence");
    if (cpu_) return cpu_->stepMany(states, ids);
    c10::InferenceMode guard;
    std::vector<HunyuanState*> sequences;
    std::vector<Rotary::Angles> angles;
    std::vector<const LoraSet*> adapters;
    for (std::size_t b = 0; b < states.size(); ++b) {
        auto& state = static_cast<HunyuanState&>(*states[b]);
        if (state.cache.length + 1 > state.cache.capacity)
            throw Error("input", "sequence of " + std::to_string(state.cache.length + 1) + " tokens exceeds the cache of " +
                                     std::to_string(state.cache.capacity));
        if (ids[b] < 0 || ids[b] >= config_.vocabSize)
            throw Error("input", "a token id lies outside the vocabulary of " + std::to_string(config_.vocabSize));
        sequences.push_back(&state);
        angles.push_back(rotary_.at(state.cache.length, 1));
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
        state->cache.length += 1;
    return logitsOf(lmHead_(finalNorm_(x)));
}

torch::Tensor HunyuanModel::hiddenStates(const torch::Tensor& ids) const {
    if (cpu_) {
        const auto flat = ids.to(torch::kCPU, torch::kInt64).contiguous().view({-1});
        auto rows = cpu_->hiddenStates(std::vector<TokenId>(flat.data_ptr<TokenId>(), flat.data_ptr<TokenId>() + flat.numel()));
        std::vector<torch::Tensor> hidden;
        for (auto& r : rows)
            hidden.push_back(torch::from_blob(r.data(), {flat.size(0), config_.hidden}, torch::kFloat32).clone());
        return torch::stack(hidden);
    }
    auto state = start(ids.size(0));
    std::vector<torch::Tensor> hidden;
    run(*state, ids, &hidden);
    return torch::stack(hidden).to(torch::kCPU);
}

}  // namespace dragoman
