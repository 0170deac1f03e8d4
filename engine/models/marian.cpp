#include "models/marian.h"

#include "cpu/marian_forward.h"
#include "kernels/silu_mul.h"
#include "layers/attention.h"
#include "models/config_reader.h"
#include "util/error.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace dragoman {
namespace {

// Keys real hub files store as copies of model.shared (transformers ties them).
constexpr const char* kSharedTableAliases[] = {"model.encoder.embed_tokens", "model.decoder.embed_tokens", "lm_head"};

constexpr double kLayerNormEps = 1e-5;

struct KvCache {
    torch::Tensor selfK, selfV;  // [B, H, maxSteps, hd], filled up to length
};

// Each decoder layer's cross-attention keys and values over one source: [1, H, S, hd], shared by every hypothesis.
class MarianMemory : public SourceMemory {
public:
    std::vector<torch::Tensor> keys, values;
};

class MarianState : public DecoderState {
public:
    ~MarianState() override {
        if (!pool) return;
        for (auto& cache : layers) {
            pool->giveBack(std::move(cache.selfK));
            pool->giveBack(std::move(cache.selfV));
        }
    }
    std::int64_t length() const override { return length_; }
    std::shared_ptr<CachePool> pool;
    std::shared_ptr<const MarianMemory> source;
    std::vector<KvCache> layers;
    std::int64_t length_ = 0;
    std::int64_t maxSteps = 0;
};

// The activation as the CPU kernels' model computes it (kernels/silu_mul.h, one pass on the kernel threads), so both
// paths give the same numbers; libtorch's own where autograd tracks x (tools/train) or x is not a float32 CPU tensor.
torch::Tensor activation(const std::string& name, const torch::Tensor& x) {
    if (name == "relu") return torch::relu(x);
    const bool tracked = torch::GradMode::is_enabled() && x.requires_grad();
    const bool swish = name == "swish" || name == "silu";
    if (tracked || !x.device().is_cpu() || x.scalar_type() != torch::kFloat32 || !x.is_contiguous())
        return swish ? torch::silu(x) : torch::gelu(x);  // "gelu": the exact erf form, as transformers' ACT2FN["gelu"]
    auto y = torch::empty_like(x);
    (swish ? kernels::silu : kernels::gelu)(x.data_ptr<float>(), y.data_ptr<float>(), x.numel());
    return y;
}

// Dropout as transformers applies it while training (after embeddings, attention outputs and fc2); a no-op
// when serving.
torch::Tensor dropout(const torch::Tensor& x, double p) {
    return p > 0.0 ? torch::dropout(x, p, true) : x;
}

// Full attention of queries x over keys/values kv ([B, T, d] each), with an optional additive mask.
torch::Tensor attend(const MarianAttention& a, const torch::Tensor& x, const torch::Tensor& kv, std::int64_t heads,
                     const torch::Tensor& mask, const LoraSet* lora = nullptr) {
    using namespace attention;
    return a.o(mergeHeads(full(splitHeads(a.q(x, lora), heads), splitHeads(a.k(kv, lora), heads), splitHeads(a.v(kv, lora), heads), mask)),
               lora);
}

// Writes one step's keys or values ([B, d] from `from`, heads side by side) into row t of a cache
// [B, H, maxSteps, hd]: plain copies, where view/transpose/narrow/copy_ were four ATen calls.
void appendStep(torch::Tensor& cache, std::int64_t t, const float* from) {
    const auto batch = cache.size(0), heads = cache.size(1), hd = cache.size(3);
    float* to = cache.data_ptr<float>();
    for (std::int64_t b = 0; b < batch; ++b)
        for (std::int64_t h = 0; h < heads; ++h)
            std::copy_n(from + (b * heads + h) * hd, hd, to + cache.stride(0) * b + cache.stride(1) * h + cache.stride(2) * t);
}

void appendStep(torch::Tensor& cache, std::int64_t t, const torch::Tensor& step) {
    const auto rows = step.contiguous();
    appendStep(cache, t, rows.data_ptr<float>());
}

// Additive mask [B, 1, 1, S] that hides padded source positions (valid: [B, S] bool).
torch::Tensor paddingMask(const torch::Tensor& valid) {
    auto mask = torch::zeros(valid.sizes(), torch::kFloat32).masked_fill(valid.logical_not(), -std::numeric_limits<float>::infinity());
    return mask.unsqueeze(1).unsqueeze(1);
}

}  // namespace

torch::Tensor marianSinusoidalPositions(std::int64_t positions, std::int64_t dim) {
    auto values = cpu::marianSinusoids(positions, dim);
    return torch::from_blob(values.data(), {positions, dim}, torch::kFloat32).clone();
}

MarianAttention::MarianAttention(WeightBinder& w, const std::string& p, std::int64_t d, Placement placement)
    : q(w, p + "q_proj.", d, d, true, placement),
      k(w, p + "k_proj.", d, d, true, placement),
      v(w, p + "v_proj.", d, d, true, placement),
      o(w, p + "out_proj.", d, d, true, placement) {}

MarianFeedForward::MarianFeedForward(WeightBinder& w, const std::string& p, std::int64_t d, std::int64_t ffn, Placement placement)
    : fc1(w, p + "fc1.", ffn, d, true, placement), fc2(w, p + "fc2.", d, ffn, true, placement) {}

ParameterLayout MarianConfig::parameterShapes() const {
    ParameterLayout layout;
    const MarianModel network(*this, WeightBinder(layout), "layout");
    return layout;
}

MarianModel::MarianModel(const MarianConfig& config, const WeightTable& weights, const std::string& modelId)
    : MarianModel(config, WeightBinder(weights), modelId) {}

MarianModel::MarianModel(const MarianConfig& config, WeightBinder w, const std::string& modelId) : config_(config) {
    const auto d = config.dModel;
    Placement placement;
    placement.int8Activations = config.int8Activations;  // W8A8 (its quantization_config)
    shared_ = Embedding(w, "model.shared.weight", config.vocabSize, d);
    const auto finalLogitsBias = w.take("final_logits_bias", {1, config.vocabSize});
    output_ = Linear(shared_.weight(), finalLogitsBias.defined() ? finalLogitsBias.view({config.vocabSize}) : finalLogitsBias,
                     shared_.scale(), placement);
    positions_ = marianSinusoidalPositions(config.maxPositions, d);
    // Aliases that real hub files carry: accepted only when they equal what they alias (an 8-bit table's
    // scales included).
    for (const auto* alias : kSharedTableAliases) {
        w.acceptAlias(alias + std::string(".weight"), shared_.weight());
        if (shared_.storedScale().defined()) w.acceptAlias(alias + std::string(".weight_scale"), shared_.storedScale());
    }
    w.acceptAlias("model.encoder.embed_positions.weight", positions_);
    w.acceptAlias("model.decoder.embed_positions.weight", positions_);
    for (std::int64_t i = 0; i < config.encoderLayers; ++i) {
        const std::string p = "model.encoder.layers." + std::to_string(i) + ".";
        MarianEncoderLayer layer;
        layer.selfAttn = MarianAttention(w, p + "self_attn.", d, placement);
        layer.selfAttnNorm = LayerNorm(w, p + "self_attn_layer_norm.", d, kLayerNormEps);
        layer.ffn = MarianFeedForward(w, p, d, config.encoderFfn, placement);
        layer.finalNorm = LayerNorm(w, p + "final_layer_norm.", d, kLayerNormEps);
        encoder_.push_back(std::move(layer));
    }
    for (std::int64_t i = 0; i < config.decoderLayers; ++i) {
        const std::string p = "model.decoder.layers." + std::to_string(i) + ".";
        MarianDecoderLayer layer;
        layer.selfAttn = MarianAttention(w, p + "self_attn.", d, placement);
        layer.selfAttnNorm = LayerNorm(w, p + "self_attn_layer_norm.", d, kLayerNormEps);
        layer.crossAttn = MarianAttention(w, p + "encoder_attn.", d, placement);
        layer.crossAttnNorm = LayerNorm(w, p + "encoder_attn_layer_norm.", d, kLayerNormEps);
        layer.ffn = MarianFeedForward(w, p, d, config.decoderFfn, placement);
        layer.finalNorm = LayerNorm(w, p + "final_layer_norm.", d, kLayerNormEps);
        decoder_.push_back(std::move(layer));
    }
    w.finish(modelId);
    numberSlots(layerLinears());
    auto products = layerLinears();
    products.push_back(&output_);
    keepPanelsOfSmallModel(products);
}

std::vector<VocabularyTable> MarianModel::vocabularyTables() const {
    return {{"model.shared", {std::begin(kSharedTableAliases), std::end(kSharedTableAliases)}}};
}

std::vector<const Linear*> MarianModel::layerLinears() const {
    std::vector<const Linear*> all;
    auto attentionOf = [&](const MarianAttention& a) {
        for (const auto* l : {&a.q, &a.k, &a.v, &a.o})
            all.push_back(l);
    };
    for (const auto& layer : encoder_) {
        attentionOf(layer.selfAttn);
        all.push_back(&layer.ffn.fc1);
        all.push_back(&layer.ffn.fc2);
    }
    for (const auto& layer : decoder_) {
        attentionOf(layer.selfAttn);
        attentionOf(layer.crossAttn);
        all.push_back(&layer.ffn.fc1);
        all.push_back(&layer.ffn.fc2);
    }
    return all;
}

double MarianModel::embeddingScale() const {
    return config_.scaleEmbedding ? std::sqrt(static_cast<double>(config_.dModel)) : 1.0;
}

torch::Tensor MarianModel::embed(const torch::Tensor& ids, std::int64_t firstPosition) const {
    auto x = shared_(ids, embeddingScale());
    const auto count = ids.size(-1);
    return x + positions_.narrow(0, firstPosition, count);
}

torch::Tensor MarianModel::embedAt(const torch::Tensor& ids, const torch::Tensor& positions) const {
    const auto onDevice = positions.device() == positions_.device() ? positions : positions.to(positions_.device());
    return shared_(ids, embeddingScale()) + positions_.index_select(0, onDevice);
}

torch::Tensor MarianModel::encodeRows(const std::vector<std::vector<TokenId>>& sources, std::vector<std::int64_t>& lengths,
                                      std::vector<torch::Tensor>* all, const LoraSet* lora) const {
    std::vector<torch::Tensor> embedded;
    for (const auto& sourceIds : sources) {
        if (sourceIds.empty()) throw Error("input", "empty source sequence");
        if (static_cast<std::int64_t>(sourceIds.size()) > config_.maxPositions)
            throw Error("input", "source of " + std::to_string(sourceIds.size()) + " tokens exceeds the model's " +
                                     std::to_string(config_.maxPositions) + " positions");
        for (auto id : sourceIds)
            if (id < 0 || id >= config_.vocabSize) throw Error("input", "token id " + std::to_string(id) + " is outside the vocabulary");
        embedded.push_back(embed(torch::tensor(sourceIds, torch::kInt64), 0));  // [S, d]
        lengths.push_back(static_cast<std::int64_t>(sourceIds.size()));
    }
    auto x = embedded.size() == 1 ? embedded.front() : torch::cat(embedded);
    if (all) all->push_back(x);
    for (const auto& layer : encoder_) {
        x = encoderRowsLayer(layer, x, lengths, lora);
        if (all) all->push_back(x);
    }
    return x;
}

torch::Tensor MarianModel::encoderRowsLayer(const MarianEncoderLayer& layer, const torch::Tensor& x,
                                            const std::vector<std::int64_t>& lengths, const LoraSet* lora) const {
    using namespace attention;
    const auto& a = layer.selfAttn;
    const auto heads = config_.encoderHeads;
    const auto qkv = Linear::many(x, {&a.q, &a.k, &a.v}, lora);
    const auto h = a.o(withinEach(qkv[0], qkv[1], qkv[2], lengths, heads), lora);
    const auto y = layer.selfAttnNorm.residual(x, h);
    return layer.finalNorm.residual(y, feedForward(layer.ffn, y, lora));
}

bool MarianModel::encoderRowStable(const LoraSet* lora) const {
    for (const auto& layer : encoder_)
        for (const auto* l : {&layer.selfAttn.q, &layer.selfAttn.k, &layer.selfAttn.v, &layer.selfAttn.o, &layer.ffn.fc1, &layer.ffn.fc2})
            if (!l->rowStable(lora)) return false;
    return true;
}

std::vector<torch::Tensor> MarianModel::encodeMany(const std::vector<std::vector<TokenId>>& sources, const LoraSet* adapter) const {
    std::vector<torch::Tensor> encoded;
    if (!encoderRowStable(adapter)) {
        // Products whose sums depend on the row count (8-bit or bf16 prompts, BLAS): each source alone.
        for (const auto& source : sources)
            encoded.push_back(encode(source, adapter));
        return encoded;
    }
    std::vector<std::int64_t> lengths;
    const auto rows = encodeRows(sources, lengths, nullptr, adapter);
    std::int64_t offset = 0;
    for (const auto length : lengths) {
        encoded.push_back(rows.narrow(0, offset, length));
        offset += length;
    }
    return encoded;
}

torch::Tensor MarianModel::feedForward(const MarianFeedForward& ffn, const torch::Tensor& x, const LoraSet* lora) const {
    return ffn.fc2(activation(config_.activation, ffn.fc1(x, lora)), lora);
}

torch::Tensor MarianModel::feedForward(const MarianFeedForward& ffn, const torch::Tensor& x,
                                       const std::vector<const LoraSet*>& adapters) const {
    return ffn.fc2(activation(config_.activation, ffn.fc1(x, adapters)), adapters);
}

torch::Tensor MarianModel::encoderLayer(const MarianEncoderLayer& layer, const torch::Tensor& x, const torch::Tensor& mask, double dropoutP,
                                        const LoraSet* lora) const {
    auto h = dropout(attend(layer.selfAttn, x, x, config_.encoderHeads, mask, lora), dropoutP);
    auto y = layer.selfAttnNorm(x + h);
    return layer.finalNorm(y + dropout(feedForward(layer.ffn, y, lora), dropoutP));
}

torch::Tensor MarianModel::decoderLayerTail(const MarianDecoderLayer& layer, const torch::Tensor& x, const torch::Tensor& crossQ,
                                            const torch::Tensor& crossK, const torch::Tensor& crossV, const torch::Tensor& crossMask,
                                            double dropoutP) const {
    auto h = layer.crossAttn.o(attention::mergeHeads(attention::full(crossQ, crossK, crossV, crossMask)));
    auto y = layer.crossAttnNorm(x + dropout(h, dropoutP));
    return layer.finalNorm(y + dropout(feedForward(layer.ffn, y), dropoutP));
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
    const auto t = targetIn.size(1);
    const auto selfMask = attention::causalMask(0, t, t);
    auto y = dropout(embed(targetIn, 0), dropoutP);
    for (const auto& layer : decoder_) {
        auto h = dropout(attend(layer.selfAttn, y, y, heads, selfMask), dropoutP);
        y = layer.selfAttnNorm(y + h);
        const auto& c = layer.crossAttn;
        y = decoderLayerTail(layer, y, attention::splitHeads(c.q(y), heads), attention::splitHeads(c.k(x), heads),
                             attention::splitHeads(c.v(x), heads), sourceMask, dropoutP);
    }
    return output_(y);
}

torch::Tensor MarianModel::encode(const std::vector<TokenId>& sourceIds, const LoraSet* adapter) const {
    std::vector<std::int64_t> lengths;
    return encodeRows({sourceIds}, lengths, nullptr, adapter);
}

torch::Tensor MarianModel::encodeAllLayers(const std::vector<TokenId>& sourceIds) const {
    std::vector<torch::Tensor> all;
    std::vector<std::int64_t> lengths;
    encodeRows({sourceIds}, lengths, &all, nullptr);
    return torch::stack(all);
}

std::shared_ptr<const SourceMemory> MarianModel::remember(const torch::Tensor& encoded, const LoraSet* adapter) const {
    auto memory = std::make_shared<MarianMemory>();
    const auto heads = config_.decoderHeads;
    for (const auto& layer : decoder_) {
        memory->keys.push_back(attention::splitHeads(layer.crossAttn.k(encoded, adapter), heads));
        memory->values.push_back(attention::splitHeads(layer.crossAttn.v(encoded, adapter), heads));
    }
    return memory;
}

std::vector<std::shared_ptr<const SourceMemory>> MarianModel::rememberMany(const std::vector<torch::Tensor>& encoded,
                                                                           const LoraSet* adapter) const {
    std::vector<std::shared_ptr<const SourceMemory>> memories;
    bool rowStable = encoded.size() > 1;
    for (const auto& layer : decoder_)
        rowStable = rowStable && layer.crossAttn.k.rowStable(adapter) && layer.crossAttn.v.rowStable(adapter);
    if (!rowStable) {
        for (const auto& source : encoded)
            memories.push_back(remember(source, adapter));
        return memories;
    }
    // Every source's rows through each layer's two products at once (12 products for a paragraph instead of 12 per
    // sentence), then each source's rows copied out: its own storage, as remember() gives it.
    std::vector<std::shared_ptr<MarianMemory>> made;
    for (std::size_t i = 0; i < encoded.size(); ++i)
        made.push_back(std::make_shared<MarianMemory>());
    const auto rows = torch::cat(encoded);
    const auto heads = config_.decoderHeads;
    for (const auto& layer : decoder_) {
        const auto keys = layer.crossAttn.k(rows, adapter), values = layer.crossAttn.v(rows, adapter);
        std::int64_t offset = 0;
        for (std::size_t i = 0; i < encoded.size(); ++i) {
            const auto length = encoded[i].size(0);
            made[i]->keys.push_back(attention::splitHeads(keys.narrow(0, offset, length).clone(), heads));
            made[i]->values.push_back(attention::splitHeads(values.narrow(0, offset, length).clone(), heads));
            offset += length;
        }
    }
    memories.assign(made.begin(), made.end());
    return memories;
}

std::unique_ptr<DecoderState> MarianModel::startDecoding(std::shared_ptr<const SourceMemory> source, std::int64_t batch,
                                                         std::int64_t maxSteps, std::shared_ptr<const LoraSet> adapter) const {
    auto memory = std::dynamic_pointer_cast<const MarianMemory>(std::move(source));
    if (!memory || memory->keys.size() != decoder_.size())
        throw Error("internal", "a source remembered by another model cannot start this Marian model's decoding");
    auto state = std::make_unique<MarianState>();
    state->source = std::move(memory);
    state->adapter = std::move(adapter);
    state->maxSteps = std::min(maxSteps, config_.maxPositions);
    state->pool = cachePool_;
    const auto heads = config_.decoderHeads, hd = config_.dModel / heads;
    for (std::size_t i = 0; i < decoder_.size(); ++i) {
        KvCache cache;
        cache.selfK = cachePool_->take({batch, heads, state->maxSteps, hd}, torch::kFloat32);
        cache.selfV = cachePool_->take({batch, heads, state->maxSteps, hd}, torch::kFloat32);
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
    const auto* lora = state.adapter.get();
    for (std::size_t i = 0; i < decoder_.size(); ++i) {
        const auto& layer = decoder_[i];
        auto& cache = state.layers[i];
        const auto& a = layer.selfAttn;
        auto q = a.q(x, lora);
        appendStep(cache.selfK, t, a.k(x, lora));
        appendStep(cache.selfV, t, a.v(x, lora));
        auto h = attention::oneQuery(q, cache.selfK.narrow(2, 0, t + 1), cache.selfV.narrow(2, 0, t + 1), heads);
        x = layer.selfAttnNorm.residual(x, a.o(h, lora));
        const auto& c = layer.crossAttn;
        auto crossed = attention::oneQuery(c.q(x, lora), state.source->keys[i], state.source->values[i], heads);
        x = layer.crossAttnNorm.residual(x, c.o(crossed, lora));
        x = layer.finalNorm.residual(x, feedForward(layer.ffn, x, lora));
    }
    state.length_ = t + 1;
    return output_(x);
}

torch::Tensor MarianModel::stepMany(const std::vector<DecoderState*>& states, const std::vector<torch::Tensor>& tokens) const {
    if (states.empty() || states.size() != tokens.size()) throw Error("input", "a batched step feeds tokens to each state");
    std::vector<MarianState*> sequences;
    std::vector<std::int64_t> rows;
    std::vector<const LoraSet*> adapters;  // one per row
    std::vector<std::int64_t> positions;   // one per row
    // Everything is checked before any cache is touched, so a refused batch leaves every state as it was.
    for (std::size_t b = 0; b < states.size(); ++b) {
        auto& state = static_cast<MarianState&>(*states[b]);
        const auto count = tokens[b].size(0);
        if (state.length_ >= state.maxSteps)
            throw Error("input", "output longer than the model's " + std::to_string(state.maxSteps) + " positions");
        if (state.layers.empty() || count != state.layers.front().selfK.size(0))
            throw Error("input", "a batched step feeds one token to each hypothesis");
        sequences.push_back(&state);
        rows.push_back(count);
        adapters.insert(adapters.end(), static_cast<std::size_t>(count), state.adapter.get());
        positions.insert(positions.end(), static_cast<std::size_t>(count), state.length_);
    }
    const auto heads = config_.decoderHeads;
    // Every row's token and position looked up at once (a lookup per state cost more than the step's attention).
    auto x = embedAt(torch::cat(tokens), torch::tensor(positions, torch::kInt64));  // [R, d]
    // Each state's rows attend over its own caches, all states in one kernel call.
    std::vector<attention::CacheView> selfCaches(sequences.size()), crossCaches(sequences.size());
    for (std::size_t i = 0; i < decoder_.size(); ++i) {
        const auto& layer = decoder_[i];
        const auto& a = layer.selfAttn;
        const auto qkv = Linear::many(x, {&a.q, &a.k, &a.v}, adapters);
        const auto k = qkv[1].contiguous(), v = qkv[2].contiguous();
        std::int64_t offset = 0;
        for (std::size_t b = 0; b < sequences.size(); ++b) {
            auto& cache = sequences[b]->layers[i];
            const auto t = sequences[b]->length_;
            appendStep(cache.selfK, t, k.data_ptr<float>() + offset * k.size(1));
            appendStep(cache.selfV, t, v.data_ptr<float>() + offset * v.size(1));
            selfCaches[b] = {&cache.selfK, &cache.selfV, rows[b], t + 1};
            const auto& source = *sequences[b]->source;
            crossCaches[b] = {&source.keys[i], &source.values[i], rows[b], source.keys[i].size(2)};
            offset += rows[b];
        }
        auto h = attention::oneQueryEach(qkv[0].contiguous(), selfCaches, heads);
        x = layer.selfAttnNorm.residual(x, a.o(h, adapters));
        const auto& c = layer.crossAttn;
        auto crossed = attention::oneQueryEach(c.q(x, adapters).contiguous(), crossCaches, heads);
        x = layer.crossAttnNorm.residual(x, c.o(crossed, adapters));
        x = layer.finalNorm.residual(x, feedForward(layer.ffn, x, adapters));
    }
    for (auto* state : sequences)
        state->length_ += 1;
    return output_(x);
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
