#include "models/hunyuan.h"

#include "kernels/rms_norm.h"
#include "kernels/rope.h"
#include "models/config_reader.h"
#include "models/ops.h"
#include "runtime/threads.h"
#include "util/error.h"
#include "util/log.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace dragoman {
namespace {

class HunyuanState : public CausalState {
public:
    std::int64_t length() const override { return length_; }
    std::int64_t capacity() const override { return capacity_; }
    std::vector<torch::Tensor> keys, values;  // per layer [kvHeads, capacity, headDim], float32
    std::int64_t length_ = 0, capacity_ = 0;
};

// RMSNorm as transformers: float32 x * rsqrt(mean(x^2) + eps), then weight * x. On the CPU kernels' path
// one pass of kernels::rmsNorm per row.
torch::Tensor rmsNorm(const torch::Tensor& x, const torch::Tensor& weight, double eps, bool cpuKernels) {
    const auto wtype = weight.scalar_type();
    if (cpuKernels && x.scalar_type() == torch::kFloat32 && x.is_contiguous() && weight.is_contiguous() &&
        (wtype == torch::kBFloat16 || wtype == torch::kFloat32)) {
        auto out = torch::empty_like(x);
        const auto d = x.size(-1), rows = x.numel() / d;
        if (wtype == torch::kFloat32)
            kernels::rmsNorm(x.data_ptr<float>(), weight.data_ptr<float>(), out.data_ptr<float>(), rows, d, eps);
        else
            kernels::rmsNorm(x.data_ptr<float>(), reinterpret_cast<const std::uint16_t*>(weight.data_ptr()), out.data_ptr<float>(), rows, d,
                             eps);
        return out;
    }
    auto normed = x * torch::rsqrt(x.pow(2).mean(-1, true) + eps);
    return weight.to(torch::kFloat32) * normed;
}

torch::Tensor rotateHalf(const torch::Tensor& x) {
    const auto half = x.size(-1) / 2;
    return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

// x [H, T, hd] as a view of a fresh projection, RoPE applied: in place on the CPU kernels' path.
torch::Tensor rotate(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin, bool cpuKernels) {
    if (!cpuKernels) return x * cos + rotateHalf(x) * sin;
    auto rows = x.contiguous();  // no copy for one position
    kernels::applyRope(rows.data_ptr<float>(), rows.size(0) * rows.size(1), rows.size(2), cos.data_ptr<float>(), sin.data_ptr<float>(),
                       rows.size(1));
    return rows;
}

}  // namespace

HunyuanConfig HunyuanConfig::parse(const nlohmann::json& json, const std::string& label) {
    const ConfigReader r(json, label);
    HunyuanConfig c;
    c.hidden = r.integer("hidden_size");
    c.intermediate = r.integer("intermediate_size");
    c.layers = r.integer("num_hidden_layers");
    c.heads = r.integer("num_attention_heads");
    c.kvHeads = r.integer("num_key_value_heads", c.heads);
    c.headDim = r.integer("head_dim", r.integer("attention_head_dim", c.heads > 0 ? c.hidden / c.heads : 0));
    c.vocabSize = r.integer("vocab_size");
    c.maxPositions = r.integer("max_position_embeddings");
    c.ropeTheta = r.number("rope_theta", 10000.0);
    c.rmsEps = r.number("rms_norm_eps", 1e-5);
    c.qkNorm = r.boolean("use_qk_norm", true);
    if (json.contains("tie_word_embeddings")) c.tieWordEmbeddings = r.boolean("tie_word_embeddings", false);
    if (c.heads <= 0 || c.kvHeads <= 0 || c.heads % c.kvHeads != 0) r.unsupported("num_key_value_heads", "must divide num_attention_heads");
    if (c.headDim <= 2 || c.headDim % 2 != 0) r.unsupported("head_dim", "must be an even number above 2");
    if (r.text("hidden_act", "silu") != "silu") r.unsupported("hidden_act", "only silu is supported");
    if (r.boolean("attention_bias", false)) r.unsupported("attention_bias", "attention biases are not supported");
    if (r.boolean("mlp_bias", false)) r.unsupported("mlp_bias", "MLP biases are not supported");
    if (r.boolean("use_cla", false)) r.unsupported("use_cla", "cross-layer attention is not supported");
    // transformers 5 saves rope_parameters (with rope_theta inside); earlier versions rope_scaling.
    for (const char* key : {"rope_parameters", "rope_scaling"}) {
        if (!json.contains(key) || !json[key].is_object()) continue;
        const auto& scaling = json[key];
        try {
            const auto type = scaling.value("rope_type", scaling.value("type", std::string("default")));
            if (scaling.contains("rope_theta") && scaling["rope_theta"].is_number()) c.ropeTheta = scaling["rope_theta"].get<double>();
            if (type == "dynamic" && scaling.contains("alpha"))
                c.ropeAlpha = scaling["alpha"].get<double>();
            else if (type != "default")
                r.unsupported(key, "type '" + type + "' without alpha is not supported");
        } catch (const nlohmann::json::exception&) {
            r.unsupported(key, "type, rope_theta and alpha must be a string and numbers");
        }
        break;
    }
    if (!(c.ropeTheta > 0) || !(c.ropeAlpha > 0)) r.unsupported("rope_theta", "rope_theta and alpha must be positive");
    return c;
}

double HunyuanConfig::ropeBase() const {
    const double hd = static_cast<double>(headDim);
    return ropeTheta * std::pow(ropeAlpha, hd / (hd - 2.0));
}

torch::Tensor hunyuanInverseFrequencies(const HunyuanConfig& config) {
    auto exponents = torch::arange(0, config.headDim, 2, torch::kInt64).to(torch::kFloat32) / static_cast<double>(config.headDim);
    return 1.0 / torch::pow(config.ropeBase(), exponents);
}

HunyuanModel::HunyuanModel(const HunyuanConfig& config, const WeightTable& weights, const std::string& modelId, Placement placement)
    : config_(config), placement_(placement) {
    if (!placement_.device.is_cpu()) placement_.libtorchOps = true;
    const auto h = config.hidden, hd = config.headDim;
    WeightBinder w(weights);
    embed_ = w.take("model.embed_tokens.weight", {config.vocabSize, h});
    finalNorm_ = w.take("model.norm.weight", {h});
    const bool storesHead = weights.find("lm_head.weight") != weights.end();
    if (config.tieWordEmbeddings == true) {
        lmHead_ = embed_;
        w.ignore("lm_head.weight");  // some exports store the tied copy; transformers does not read it
    } else if (storesHead) {
        lmHead_ = w.take("lm_head.weight", {config.vocabSize, h});
    } else {
        // Untied (or unstated) with no output layer stored: transformers would start from random weights,
        // which is never what the export meant. The embeddings are the output layer the model was made with.
        if (config.tieWordEmbeddings == false)
            log::logger().warn("{}: tie_word_embeddings is false but there is no lm_head.weight; using the embeddings", modelId);
        lmHead_ = embed_;
    }
    for (std::int64_t i = 0; i < config.layers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        HunyuanLayer l;
        l.inputNorm = w.take(p + "input_layernorm.weight", {h});
        l.q = w.take(p + "self_attn.q_proj.weight", {config.heads * hd, h});
        l.k = w.take(p + "self_attn.k_proj.weight", {config.kvHeads * hd, h});
        l.v = w.take(p + "self_attn.v_proj.weight", {config.kvHeads * hd, h});
        l.o = w.take(p + "self_attn.o_proj.weight", {h, config.heads * hd});
        if (config.qkNorm) {
            l.qNorm = w.take(p + "self_attn.query_layernorm.weight", {hd});
            l.kNorm = w.take(p + "self_attn.key_layernorm.weight", {hd});
        }
        l.postNorm = w.take(p + "post_attention_layernorm.weight", {h});
        l.gate = w.take(p + "mlp.gate_proj.weight", {config.intermediate, h});
        l.up = w.take(p + "mlp.up_proj.weight", {config.intermediate, h});
        l.down = w.take(p + "mlp.down_proj.weight", {h, config.intermediate});
        layers_.push_back(std::move(l));
    }
    w.finish(modelId);
    invFreq_ = hunyuanInverseFrequencies(config);
    for (const auto& l : layers_)
        for (const auto* t : {&l.inputNorm, &l.q, &l.k, &l.v, &l.o, &l.qNorm, &l.kNorm, &l.postNorm, &l.gate, &l.up, &l.down})
            if (t->defined()) weightBytesPerToken_ += static_cast<std::int64_t>(t->nbytes());
    weightBytesPerToken_ += static_cast<std::int64_t>(lmHead_.nbytes() + finalNorm_.nbytes());
    if (placement_.device.is_cpu()) return;
    // One copy to device memory, in the checkpoint's dtype; the tied output layer stays the same tensor.
    const auto device = placement_.device;
    const bool tied = lmHead_.is_same(embed_);
    embed_ = embed_.to(device);
    lmHead_ = tied ? embed_ : lmHead_.to(device);
    finalNorm_ = finalNorm_.to(device);
    invFreq_ = invFreq_.to(device);
    for (auto& l : layers_)
        for (auto* t : {&l.inputNorm, &l.q, &l.k, &l.v, &l.o, &l.qNorm, &l.kNorm, &l.postNorm, &l.gate, &l.up, &l.down})
            if (t->defined()) *t = t->to(device);
}

torch::Tensor HunyuanModel::project(const torch::Tensor& x, const torch::Tensor& weight) const {
    return placement_.onCpuKernels() ? ops::project(x, weight) : ops::libtorchProject(x, weight);
}

std::vector<torch::Tensor> HunyuanModel::projectMany(const torch::Tensor& x, const std::vector<torch::Tensor>& weights) const {
    if (placement_.onCpuKernels()) return ops::projectMany(x, weights);
    std::vector<torch::Tensor> out;
    for (const auto& w : weights)
        out.push_back(ops::libtorchProject(x, w));
    return out;
}

std::unique_ptr<CausalState> HunyuanModel::start(std::int64_t maxTokens) const {
    auto state = std::make_unique<HunyuanState>();
    state->capacity_ = std::max<std::int64_t>(1, std::min(maxTokens, config_.maxPositions));
    for (std::int64_t i = 0; i < config_.layers; ++i) {
        state->keys.push_back(torch::empty({config_.kvHeads, state->capacity_, config_.headDim},
                                           torch::TensorOptions().dtype(torch::kFloat32).device(placement_.device)));
        state->values.push_back(torch::empty_like(state->keys.back()));
    }
    return state;
}

torch::Tensor HunyuanModel::attention(const HunyuanLayer& l, std::size_t index, CausalState& base, const torch::Tensor& x,
                                      const torch::Tensor& cos, const torch::Tensor& sin) const {
    auto& state = static_cast<HunyuanState&>(base);
    const auto t = x.size(0), heads = config_.heads, kvHeads = config_.kvHeads, hd = config_.headDim;
    const auto start = state.length_, total = start + t;
    const auto qkv = projectMany(x, {l.q, l.k, l.v});
    auto q = qkv[0].view({t, heads, hd}).transpose(0, 1);  // [H, T, hd]
    auto k = qkv[1].view({t, kvHeads, hd}).transpose(0, 1);
    auto v = qkv[2].view({t, kvHeads, hd}).transpose(0, 1);
    const bool cpuKernels = placement_.onCpuKernels();
    q = rotate(q, cos, sin, cpuKernels);
    k = rotate(k, cos, sin, cpuKernels);
    if (config_.qkNorm) {  // after RoPE, as transformers' HunYuanDenseV1Attention
        q = rmsNorm(q, l.qNorm, config_.rmsEps, cpuKernels);
        k = rmsNorm(k, l.kNorm, config_.rmsEps, cpuKernels);
    }
    state.keys[index].narrow(1, start, t).copy_(k);
    state.values[index].narrow(1, start, t).copy_(v);
    const auto keys = state.keys[index].narrow(1, 0, total), values = state.values[index].narrow(1, 0, total);
    if (t == 1 && cpuKernels)  // a decoding step: one pass of the engine's attention kernel, heads merged
        return project(ops::attendOneQuery(q.reshape({1, heads * hd}), keys.unsqueeze(0), values.unsqueeze(0), heads), l.o);
    // Query heads sharing a key/value head are stacked so one batched product serves the whole group.
    const auto group = heads / kvHeads;
    auto grouped = q.reshape({kvHeads, group * t, hd});
    ParallelBlas blas(grouped.numel() * total);  // each of the two products (parallel for a long prompt)
    auto scores = torch::matmul(grouped, keys.transpose(1, 2)) * (1.0 / std::sqrt(static_cast<double>(hd)));
    if (t > 1) {
        const auto on = torch::TensorOptions().device(placement_.device);
        auto positions = torch::arange(start, total, on.dtype(torch::kInt64)).unsqueeze(1);  // [T, 1]
        auto keyPositions = torch::arange(0, total, on.dtype(torch::kInt64)).unsqueeze(0);   // [1, total]
        auto mask = torch::zeros({t, total}, on.dtype(torch::kFloat32))
                        .masked_fill(keyPositions > positions, -std::numeric_limits<float>::infinity());
        scores = scores + mask.repeat({group, 1});
    }
    auto context = torch::matmul(torch::softmax(scores, -1), values);  // [kvHeads, group * T, hd]
    context = context.view({heads, t, hd}).transpose(0, 1).reshape({t, heads * hd});
    return project(context, l.o);
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
    const auto on = torch::TensorOptions().device(placement_.device);
    const bool cpuKernels = placement_.onCpuKernels();
    auto positions = torch::arange(state.length_, state.length_ + t, on.dtype(torch::kInt64)).to(torch::kFloat32);
    auto angles = torch::outer(positions, invFreq_);
    auto emb = torch::cat({angles, angles}, -1);  // [T, hd]
    const auto cos = emb.cos(), sin = emb.sin();

    auto x = torch::embedding(embed_, ids.to(placement_.device)).to(torch::kFloat32);  // [T, H]
    if (hidden) hidden->push_back(x);
    for (std::size_t i = 0; i < layers_.size(); ++i) {
        const auto& l = layers_[i];
        x = x + attention(l, i, state, rmsNorm(x, l.inputNorm, config_.rmsEps, cpuKernels), cos, sin);
        auto h = rmsNorm(x, l.postNorm, config_.rmsEps, cpuKernels);
        const auto gateUp = projectMany(h, {l.gate, l.up});
        x = x + project(torch::silu(gateUp[0]) * gateUp[1], l.down);
        if (hidden) hidden->push_back(x);
    }
    state.length_ += t;
    x = rmsNorm(x, finalNorm_, config_.rmsEps, cpuKernels);
    if (hidden) hidden->push_back(x);
    return x;
}

torch::Tensor HunyuanModel::forward(CausalState& state, const torch::Tensor& ids, bool allPositions) const {
    auto x = run(state, ids, nullptr);
    // Logits come back to the CPU, where search and sampling run (a no-op there).
    if (!allPositions) return project(x.narrow(0, x.size(0) - 1, 1), lmHead_).view({config_.vocabSize}).to(torch::kCPU);
    return project(x, lmHead_).to(torch::kCPU);
}

torch::Tensor HunyuanModel::hiddenStates(const torch::Tensor& ids) const {
    auto state = start(ids.size(0));
    std::vector<torch::Tensor> hidden;
    run(*state, ids, &hidden);
    return torch::stack(hidden).to(torch::kCPU);
}

}  // namespace dragoman
