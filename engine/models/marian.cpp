#include "models/marian.h"

#include "kernels/layer_norm.h"
#include "models/config_reader.h"
#include "models/ops.h"
#include "runtime/threads.h"
#include "util/error.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace dragoman {
namespace F = torch::nn::functional;

namespace {

constexpr double kLayerNormEps = 1e-5;

struct KvCache {
    torch::Tensor selfK, selfV;    // [B, H, maxSteps, hd], filled up to length
    torch::Tensor crossK, crossV;  // [1, H, S, hd], shared by every hypothesis
};

class MarianState : public DecoderState {
public:
    std::int64_t length() const override { return length_; }
    std::vector<KvCache> layers;
    std::int64_t length_ = 0;
    std::int64_t maxSteps = 0;
};

torch::Tensor activation(const std::string& name, const torch::Tensor& x) {
    if (name == "swish" || name == "silu") return torch::silu(x);
    if (name == "relu") return torch::relu(x);
    return torch::gelu(x);  // "gelu": exact erf form, as transformers' ACT2FN["gelu"]
}

// [T, d] or [B, T, d] -> [B, H, T, hd]
torch::Tensor splitHeads(const torch::Tensor& x, std::int64_t heads) {
    const auto batched = x.dim() == 3 ? x : x.unsqueeze(0);
    const auto b = batched.size(0), t = batched.size(1), d = batched.size(2);
    return batched.view({b, t, heads, d / heads}).transpose(1, 2);
}

// [B, H, T, hd] -> [B, T, d]
torch::Tensor mergeHeads(const torch::Tensor& x) {
    const auto b = x.size(0), h = x.size(1), t = x.size(2), hd = x.size(3);
    return x.transpose(1, 2).reshape({b, t, h * hd});
}

// Scaled dot-product attention; `mask` (optional) is added to the scores: 0 where allowed, -inf where not.
torch::Tensor attend(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask = {}) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    ParallelBlas blas(q.numel() * k.size(-2));  // each of the two products
    auto scores = torch::matmul(q, k.transpose(-1, -2)) * scale;
    if (mask.defined()) scores = scores + mask;
    return torch::matmul(torch::softmax(scores, -1), v);
}

// Dropout as transformers applies it while training (after embeddings, attention outputs and fc2); a no-op
// when serving.
torch::Tensor dropout(const torch::Tensor& x, double p) {
    return p > 0.0 ? torch::dropout(x, p, true) : x;
}

torch::Tensor feedForward(const std::string& act, const torch::Tensor& x, const torch::Tensor& w1, const torch::Tensor& b1,
                          const torch::Tensor& w2, const torch::Tensor& b2) {
    return ops::linear(activation(act, ops::linear(x, w1, b1)), w2, b2);
}

// Full attention of queries x over keys/values kv ([B, T, d] each), with an optional additive mask.
torch::Tensor attention(const MarianAttention& a, const torch::Tensor& x, const torch::Tensor& kv, std::int64_t heads,
                        const torch::Tensor& mask) {
    auto q = splitHeads(ops::linear(x, a.qW, a.qB), heads);
    auto k = splitHeads(ops::linear(kv, a.kW, a.kB), heads);
    auto v = splitHeads(ops::linear(kv, a.vW, a.vB), heads);
    return ops::linear(mergeHeads(attend(q, k, v, mask)), a.oW, a.oB);
}

// Writes one step's keys or values ([B, d], heads side by side) into row t of a cache [B, H, maxSteps, hd]:
// plain copies, where view/transpose/narrow/copy_ were four ATen calls.
void appendStep(torch::Tensor& cache, std::int64_t t, const torch::Tensor& step) {
    const auto batch = cache.size(0), heads = cache.size(1), hd = cache.size(3);
    const auto rows = step.contiguous();
    const float* from = rows.data_ptr<float>();
    float* to = cache.data_ptr<float>();
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t h = 0; h < heads; ++h)
            std::copy_n(from + (b * heads + h) * hd, hd, to + cache.stride(0) * b + cache.stride(1) * h + cache.stride(2) * t);
}

// Additive mask [B, 1, 1, S] that hides padded source positions (valid: [B, S] bool).
torch::Tensor paddingMask(const torch::Tensor& valid) {
    auto mask = torch::zeros(valid.sizes(), torch::kFloat32).masked_fill(valid.logical_not(), -std::numeric_limits<float>::infinity());
    return mask.unsqueeze(1).unsqueeze(1);
}

// Additive mask [1, 1, T, T] letting position i see positions <= i.
torch::Tensor causalMask(std::int64_t t) {
    return torch::full({t, t}, -std::numeric_limits<float>::infinity(), torch::kFloat32).triu(1).unsqueeze(0).unsqueeze(0);
}

}  // namespace

MarianConfig MarianConfig::parse(const nlohmann::json& json, const std::string& label) {
    const ConfigReader r(json, label);
    MarianConfig c;
    c.dModel = r.integer("d_model");
    c.encoderLayers = r.integer("encoder_layers");
    c.decoderLayers = r.integer("decoder_layers");
    c.encoderHeads = r.integer("encoder_attention_heads");
    c.decoderHeads = r.integer("decoder_attention_heads");
    c.encoderFfn = r.integer("encoder_ffn_dim");
    c.decoderFfn = r.integer("decoder_ffn_dim");
    c.vocabSize = r.integer("vocab_size");
    c.maxPositions = r.integer("max_position_embeddings");
    c.decoderStart = r.integer("decoder_start_token_id");
    c.eos = r.integer("eos_token_id");
    c.pad = r.integer("pad_token_id", c.decoderStart);
    c.scaleEmbedding = r.boolean("scale_embedding", false);
    c.activation = r.text("activation_function", "gelu");
    if (c.dModel <= 0 || c.dModel % 2 != 0) r.unsupported("d_model", "must be a positive even number");
    if (c.dModel % c.encoderHeads != 0 || c.dModel % c.decoderHeads != 0)
        r.unsupported("encoder_attention_heads", "d_model must divide evenly into heads");
    if (c.activation != "swish" && c.activation != "silu" && c.activation != "relu" && c.activation != "gelu")
        r.unsupported("activation_function", "'" + c.activation + "' (swish, silu, relu, gelu are supported)");
    if (r.boolean("normalize_before", false)) r.unsupported("normalize_before", "pre-LN Marian models are not supported");
    if (r.boolean("normalize_embedding", false) || r.boolean("add_final_layer_norm", false))
        r.unsupported("normalize_embedding", "embedding/final layer norms are not supported");
    if (!r.boolean("static_position_embeddings", true)) r.unsupported("static_position_embeddings", "learned positions");
    if (!r.boolean("share_encoder_decoder_embeddings", true))
        r.unsupported("share_encoder_decoder_embeddings", "separate source/target vocabularies are not supported yet");
    if (r.integer("decoder_vocab_size", c.vocabSize) != c.vocabSize) r.unsupported("decoder_vocab_size", "differs from vocab_size");
    for (auto id : {c.decoderStart, c.eos, c.pad})
        if (id < 0 || id >= c.vocabSize) r.unsupported("eos_token_id", "special token ids must lie inside the vocabulary");
    return c;
}

std::vector<std::pair<std::string, std::vector<std::int64_t>>> MarianConfig::parameterShapes() const {
    std::vector<std::pair<std::string, std::vector<std::int64_t>>> shapes{{"model.shared.weight", {vocabSize, dModel}},
                                                                          {"final_logits_bias", {1, vocabSize}}};
    auto add = [&](const std::string& name, std::vector<std::int64_t> shape) { shapes.emplace_back(name, std::move(shape)); };
    auto attention = [&](const std::string& p) {
        for (const char* proj : {"q_proj.", "k_proj.", "v_proj.", "out_proj."}) {
            add(p + proj + "weight", {dModel, dModel});
            add(p + proj + "bias", {dModel});
        }
    };
    auto norm = [&](const std::string& p) {
        add(p + "weight", {dModel});
        add(p + "bias", {dModel});
    };
    auto layer = [&](const std::string& p, std::int64_t ffn, bool decoder) {
        attention(p + "self_attn.");
        norm(p + "self_attn_layer_norm.");
        if (decoder) {
            attention(p + "encoder_attn.");
            norm(p + "encoder_attn_layer_norm.");
        }
        add(p + "fc1.weight", {ffn, dModel});
        add(p + "fc1.bias", {ffn});
        add(p + "fc2.weight", {dModel, ffn});
        add(p + "fc2.bias", {dModel});
        norm(p + "final_layer_norm.");
    };
    for (std::int64_t i = 0; i < encoderLayers; ++i)
        layer("model.encoder.layers." + std::to_string(i) + ".", encoderFfn, false);
    for (std::int64_t i = 0; i < decoderLayers; ++i)
        layer("model.decoder.layers." + std::to_string(i) + ".", decoderFfn, true);
    return shapes;
}

torch::Tensor marianSinusoidalPositions(std::int64_t positions, std::int64_t dim) {
    auto table = torch::empty({positions, dim}, torch::kFloat32);
    auto* out = table.data_ptr<float>();
    const std::int64_t half = dim / 2;
    for (std::int64_t p = 0; p < positions; ++p) {
        for (std::int64_t c = 0; c < half; ++c) {
            // Columns c (sin of j = 2c) and half + c (cos of j = 2c + 1) share the exponent 2c / dim.
            const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * static_cast<double>(c) / static_cast<double>(dim));
            out[p * dim + c] = static_cast<float>(std::sin(angle));
            out[p * dim + half + c] = static_cast<float>(std::cos(angle));
        }
    }
    return table;
}

void MarianAttention::bind(WeightBinder& w, const std::string& p, std::int64_t d) {
    qW = w.take(p + "q_proj.weight", {d, d});
    qB = w.take(p + "q_proj.bias", {d});
    kW = w.take(p + "k_proj.weight", {d, d});
    kB = w.take(p + "k_proj.bias", {d});
    vW = w.take(p + "v_proj.weight", {d, d});
    vB = w.take(p + "v_proj.bias", {d});
    oW = w.take(p + "out_proj.weight", {d, d});
    oB = w.take(p + "out_proj.bias", {d});
}

void MarianLayerNorm::bind(WeightBinder& w, const std::string& p, std::int64_t d) {
    weight = w.take(p + "weight", {d});
    bias = w.take(p + "bias", {d});
}

torch::Tensor MarianLayerNorm::operator()(const torch::Tensor& x) const {
    // Norm weights are tiny: a bf16 checkpoint's are widened per call rather than converted at load.
    if (weight.scalar_type() != torch::kFloat32)
        return torch::layer_norm(x, {x.size(-1)}, weight.to(torch::kFloat32), bias.to(torch::kFloat32), kLayerNormEps);
    return torch::layer_norm(x, {x.size(-1)}, weight, bias, kLayerNormEps);
}

torch::Tensor MarianLayerNorm::residual(const torch::Tensor& x, const torch::Tensor& h) const {
    const bool tracked = torch::GradMode::is_enabled() && (x.requires_grad() || h.requires_grad() || weight.requires_grad());
    const auto f32 = torch::kFloat32;
    if (tracked || x.scalar_type() != f32 || h.scalar_type() != f32 || weight.scalar_type() != f32 || bias.scalar_type() != f32 ||
        !x.is_contiguous() || !h.is_contiguous() || x.sizes() != h.sizes())
        return (*this)(x + h);
    auto out = torch::empty_like(x);
    const auto d = x.size(-1);
    kernels::addLayerNorm(x.data_ptr<float>(), h.data_ptr<float>(), weight.data_ptr<float>(), bias.data_ptr<float>(), out.data_ptr<float>(),
                          x.numel() / d, d, kLayerNormEps);
    return out;
}

MarianModel::MarianModel(const MarianConfig& config, const WeightTable& weights, const std::string& modelId) : config_(config) {
    const auto d = config.dModel;
    WeightBinder w(weights);
    shared_ = w.take("model.shared.weight", {config.vocabSize, d});
    finalLogitsBias_ = w.take("final_logits_bias", {1, config.vocabSize});
    positions_ = marianSinusoidalPositions(config.maxPositions, d);
    // Aliases that real hub files carry: accepted only when they equal what they alias.
    w.acceptAlias("model.encoder.embed_tokens.weight", shared_);
    w.acceptAlias("model.decoder.embed_tokens.weight", shared_);
    w.acceptAlias("lm_head.weight", shared_);
    w.acceptAlias("model.encoder.embed_positions.weight", positions_);
    w.acceptAlias("model.decoder.embed_positions.weight", positions_);
    auto ffn = [&](auto& layer, const std::string& p, std::int64_t f) {
        layer.fc1W = w.take(p + "fc1.weight", {f, d});
        layer.fc1B = w.take(p + "fc1.bias", {f});
        layer.fc2W = w.take(p + "fc2.weight", {d, f});
        layer.fc2B = w.take(p + "fc2.bias", {d});
        layer.finalNorm.bind(w, p + "final_layer_norm.", d);
    };
    for (std::int64_t i = 0; i < config.encoderLayers; ++i) {
        const std::string p = "model.encoder.layers." + std::to_string(i) + ".";
        MarianEncoderLayer layer;
        layer.selfAttn.bind(w, p + "self_attn.", d);
        layer.selfAttnNorm.bind(w, p + "self_attn_layer_norm.", d);
        ffn(layer, p, config.encoderFfn);
        encoder_.push_back(std::move(layer));
    }
    for (std::int64_t i = 0; i < config.decoderLayers; ++i) {
        const std::string p = "model.decoder.layers." + std::to_string(i) + ".";
        MarianDecoderLayer layer;
        layer.selfAttn.bind(w, p + "self_attn.", d);
        layer.selfAttnNorm.bind(w, p + "self_attn_layer_norm.", d);
        layer.crossAttn.bind(w, p + "encoder_attn.", d);
        layer.crossAttnNorm.bind(w, p + "encoder_attn_layer_norm.", d);
        ffn(layer, p, config.decoderFfn);
        decoder_.push_back(std::move(layer));
    }
    w.finish(modelId);
}

torch::Tensor MarianModel::embed(const torch::Tensor& ids, std::int64_t firstPosition) const {
    const double scale = config_.scaleEmbedding ? std::sqrt(static_cast<double>(config_.dModel)) : 1.0;
    auto x = F::embedding(ids, shared_).to(torch::kFloat32) * scale;
    const auto count = ids.size(-1);
    return x + positions_.narrow(0, firstPosition, count);
}

torch::Tensor MarianModel::encodeLayers(const std::vector<TokenId>& sourceIds, std::vector<torch::Tensor>* all) const {
    if (sourceIds.empty()) throw Error("input", "empty source sequence");
    if (static_cast<std::int64_t>(sourceIds.size()) > config_.maxPositions)
        throw Error("input", "source of " + std::to_string(sourceIds.size()) + " tokens exceeds the model's " +
                                 std::to_string(config_.maxPositions) + " positions");
    for (auto id : sourceIds)
        if (id < 0 || id >= config_.vocabSize) throw Error("input", "token id " + std::to_string(id) + " is outside the vocabulary");
    auto x = embed(torch::tensor(sourceIds, torch::kInt64).unsqueeze(0), 0);  // [1, S, d]
    if (all) all->push_back(x.squeeze(0));
    for (const auto& layer : encoder_) {
        x = encoderLayer(layer, x, {}, 0.0);
        if (all) all->push_back(x.squeeze(0));
    }
    return x.squeeze(0);
}

torch::Tensor MarianModel::encoderLayer(const MarianEncoderLayer& layer, const torch::Tensor& x, const torch::Tensor& mask,
                                        double dropoutP) const {
    auto h = dropout(attention(layer.selfAttn, x, x, config_.encoderHeads, mask), dropoutP);
    auto y = layer.selfAttnNorm(x + h);
    return layer.finalNorm(y + dropout(feedForward(config_.activation, y, layer.fc1W, layer.fc1B, layer.fc2W, layer.fc2B), dropoutP));
}

torch::Tensor MarianModel::decoderLayerTail(const MarianDecoderLayer& layer, const torch::Tensor& x, const torch::Tensor& crossQ,
                                            const torch::Tensor& crossK, const torch::Tensor& crossV, const torch::Tensor& crossMask,
                                            double dropoutP) const {
    const auto& c = layer.crossAttn;
    auto h = ops::linear(mergeHeads(attend(crossQ, crossK, crossV, crossMask)), c.oW, c.oB);
    auto y = layer.crossAttnNorm(x + dropout(h, dropoutP));
    return layer.finalNorm(y + dropout(feedForward(config_.activation, y, layer.fc1W, layer.fc1B, layer.fc2W, layer.fc2B), dropoutP));
}

torch::Tensor MarianModel::logits(const torch::Tensor& hidden) const {
    return ops::linear(hidden, shared_) + finalLogitsBias_.view({config_.vocabSize}).to(torch::kFloat32);
}

torch::Tensor MarianModel::forwardBatch(const torch::Tensor& source, const torch::Tensor& sourceValid, const torch::Tensor& targetIn,
                                        double dropoutP) const {
    if (source.size(1) > config_.maxPositions || targetIn.size(1) > config_.maxPositions)
        throw Error("input", "batch longer than the model's " + std::to_string(config_.maxPositions) + " positions");
    const auto sourceMask = paddingMask(sourceValid);
    auto x = dropout(embed(source, 0), dropoutP);
    for (const auto& layer : encoder_)
        x = encoderLayer(layer, x, sourceMask, dropoutP);

    const auto heads = config_.decoderHeads;
    const auto selfMask = causalMask(targetIn.size(1));
    auto y = dropout(embed(targetIn, 0), dropoutP);
    for (const auto& layer : decoder_) {
        auto h = dropout(attention(layer.selfAttn, y, y, heads, selfMask), dropoutP);
        y = layer.selfAttnNorm(y + h);
        const auto& c = layer.crossAttn;
        auto q = splitHeads(ops::linear(y, c.qW, c.qB), heads);
        auto k = splitHeads(ops::linear(x, c.kW, c.kB), heads);
        auto v = splitHeads(ops::linear(x, c.vW, c.vB), heads);
        y = decoderLayerTail(layer, y, q, k, v, sourceMask, dropoutP);
    }
    return logits(y);
}

torch::Tensor MarianModel::encode(const std::vector<TokenId>& sourceIds) const {
    return encodeLayers(sourceIds, nullptr);
}

torch::Tensor MarianModel::encodeAllLayers(const std::vector<TokenId>& sourceIds) const {
    std::vector<torch::Tensor> all;
    encodeLayers(sourceIds, &all);
    return torch::stack(all);
}

std::unique_ptr<DecoderState> MarianModel::startDecoding(const torch::Tensor& encoded, std::int64_t batch, std::int64_t maxSteps) const {
    auto state = std::make_unique<MarianState>();
    state->maxSteps = std::min(maxSteps, config_.maxPositions);
    const auto heads = config_.decoderHeads, hd = config_.dModel / heads;
    for (const auto& layer : decoder_) {
        KvCache cache;
        cache.selfK = torch::empty({batch, heads, state->maxSteps, hd}, torch::kFloat32);
        cache.selfV = torch::empty_like(cache.selfK);
        // Cross-attention keys and values depend only on the source: computed once per request.
        cache.crossK = splitHeads(ops::linear(encoded, layer.crossAttn.kW, layer.crossAttn.kB), heads);
        cache.crossV = splitHeads(ops::linear(encoded, layer.crossAttn.vW, layer.crossAttn.vB), heads);
        state->layers.push_back(std::move(cache));
    }
    return state;
}

torch::Tensor MarianModel::step(DecoderState& base, const torch::Tensor& tokens) const {
    auto& state = static_cast<MarianState&>(base);
    const auto t = state.length_;
    if (t >= state.maxSteps) throw Error("input", "output longer than the model's " + std::to_string(state.maxSteps) + " positions");
    const auto heads = config_.decoderHeads;
    auto x = embed(tokens.unsqueeze(1), t).squeeze(1);  // [B, d]
    for (std::size_t i = 0; i < decoder_.size(); ++i) {
        const auto& layer = decoder_[i];
        auto& cache = state.layers[i];
        const auto& a = layer.selfAttn;
        auto q = ops::linear(x, a.qW, a.qB);
        appendStep(cache.selfK, t, ops::linear(x, a.kW, a.kB));
        appendStep(cache.selfV, t, ops::linear(x, a.vW, a.vB));
        auto h = ops::attendOneQuery(q, cache.selfK.narrow(2, 0, t + 1), cache.selfV.narrow(2, 0, t + 1), heads);
        x = layer.selfAttnNorm.residual(x, ops::linear(h, a.oW, a.oB));
        const auto& c = layer.crossAttn;
        auto crossed = ops::attendOneQuery(ops::linear(x, c.qW, c.qB), cache.crossK, cache.crossV, heads);
        x = layer.crossAttnNorm.residual(x, ops::linear(crossed, c.oW, c.oB));
        x = layer.finalNorm.residual(x, feedForward(config_.activation, x, layer.fc1W, layer.fc1B, layer.fc2W, layer.fc2B));
    }
    state.length_ = t + 1;
    return logits(x);
}

void MarianModel::reorder(DecoderState& base, const torch::Tensor& beams) const {
    auto& state = static_cast<MarianState&>(base);
    // Only the filled part of the cache moves; the preallocated tail stays where it is.
    const auto filled = state.length_;
    if (filled == 0) return;
    for (auto& cache : state.layers) {
        for (auto* tensor : {&cache.selfK, &cache.selfV}) {
            auto used = tensor->narrow(2, 0, filled);
            used.copy_(used.index_select(0, beams));
        }
    }
}

}  // namespace dragoman
