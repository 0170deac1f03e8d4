#include "models/hunyuan_cpu.h"

#include "cpu/checkpoint_binder.h"
#include "runtime/torch_backend.h"
#include "util/error.h"
#include "util/log.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace dragoman {
namespace {

// The linear layers of a layer, in slot order (7 per layer), with their checkpoint names.
constexpr const char* kLinearNames[] = {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                                        "mlp.gate_proj",    "mlp.up_proj",      "mlp.down_proj"};

// One sequence's cache: per layer keys then values [kvHeads, capacity, headDim] float32, in one allocation (uninitialised:
// positions are written before they are read).
class CpuState : public CausalState {
public:
    CpuState(std::int64_t layers, std::int64_t kvHeads, std::int64_t capacity, std::int64_t headDim)
        : perTable_(kvHeads * capacity * headDim) {
        const auto bytes = static_cast<std::size_t>(2 * layers * perTable_) * sizeof(float);
        memory_.reset(static_cast<float*>(std::aligned_alloc(64, std::max<std::size_t>(64, (bytes + 63) / 64 * 64))));
        if (!memory_) throw Error("memory", "no memory for a KV cache of " + std::to_string(bytes >> 20) + " MiB");
        cache.capacity = capacity;
        for (std::int64_t l = 0; l < layers; ++l) {
            cache.keys.push_back(memory_.get() + (2 * l) * perTable_);
            cache.values.push_back(memory_.get() + (2 * l + 1) * perTable_);
        }
    }
    std::int64_t length() const override { return cache.length; }
    std::int64_t capacity() const override { return cache.capacity; }

    cpu::KvCache cache;
    // The adapter (CausalState::adapter) as the forward reads it, and the adapter it was made for, held so that the
    // views never outlive what they point into.
    std::shared_ptr<const LoraSet> viewed;
    std::shared_ptr<const cpu::Adapter> view;

private:
    struct Free {
        void operator()(float* p) const { std::free(p); }
    };
    std::int64_t perTable_;
    std::unique_ptr<float, Free> memory_;
};

// Every layer's linear layers in slot order (7 per layer), named and shaped as the checkpoint stores them.
std::vector<LinearModule> linearModules(const HunyuanConfig& config) {
    const auto h = config.hidden, hd = config.headDim;
    const std::int64_t outs[] = {
        config.heads * hd, config.kvHeads * hd, config.kvHeads * hd, h, config.intermediate, config.intermediate, h};
    const std::int64_t ins[] = {h, h, h, config.heads * hd, h, h, config.intermediate};
    std::vector<LinearModule> modules;
    for (std::int64_t i = 0; i < config.layers; ++i)
        for (std::size_t s = 0; s < 7; ++s)
            modules.push_back(
                {"model.layers." + std::to_string(i) + "." + kLinearNames[s], outs[s], ins[s], static_cast<int>(modules.size())});
    return modules;
}

cpu::HunyuanShape shapeOf(const HunyuanConfig& config, bool bf16Activations) {
    cpu::HunyuanShape shape;
    shape.hidden = config.hidden;
    shape.intermediate = config.intermediate;
    shape.heads = config.heads;
    shape.kvHeads = config.kvHeads;
    shape.headDim = config.headDim;
    shape.vocab = config.vocabSize;
    shape.maxPositions = config.maxPositions;
    shape.rmsEps = config.rmsEps;
    shape.ropeBase = config.ropeBase();
    shape.qkNorm = config.qkNorm;
    shape.bf16Activations = bf16Activations;
    return shape;
}

}  // namespace

HunyuanCpuWeights bindHunyuanCheckpoint(const HunyuanConfig& config, const Checkpoint& checkpoint, const std::string& modelId) {
    cpu::CheckpointBinder w(checkpoint);
    const auto h = config.hidden, hd = config.headDim;
    HunyuanCpuWeights bound;
    auto& out = bound.weights;
    out.embeddings = w.matrix("model.embed_tokens.weight", config.vocabSize, h, true);
    // A bf16 model (as its config says; unsaid: as its embeddings are stored) may take bf16 prompt products.
    const auto* embeddings = checkpoint.find("model.embed_tokens.weight");
    bound.bf16Activations = config.computesInBf16(embeddings && embeddings->info->dtype == DType::BF16);
    out.finalNorm = w.norm("model.norm.weight", h);
    const bool storesHead = w.has("lm_head.weight");
    if (config.tieWordEmbeddings == true || !storesHead) {
        // Tied: some exports store the copy anyway, which transformers does not read. Untied (or unstated) with no
        // output layer stored: transformers would start from random weights, never what the export meant; the
        // embeddings are the output layer the model was made with.
        if (config.tieWordEmbeddings == false && !storesHead)
            log::logger().warn("{}: tie_word_embeddings is false but there is no lm_head.weight; using the embeddings", modelId);
        w.ignore("lm_head.weight");
        w.ignore("lm_head.weight_scale");
        out.output = out.embeddings;
    } else {
        out.output = w.matrix("lm_head.weight", config.vocabSize, h);
        w.ignore("lm_head.input_scale");
        bound.tiedOutput = false;
    }
    const auto modules = linearModules(config);
    for (std::int64_t i = 0; i < config.layers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        cpu::HunyuanLayerWeights l;
        l.inputNorm = w.norm(p + "input_layernorm.weight", h);
        cpu::Matrix* matrices[] = {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down};
        for (std::size_t s = 0; s < 7; ++s) {
            const auto& module = modules[static_cast<std::size_t>(7 * i) + s];
            *matrices[s] = w.matrix(module.name + ".weight", module.out, module.in);
            // A static activation scale only matters where activations are quantized; they stay float32 here.
            w.ignore(module.name + ".input_scale");
        }
        if (config.qkNorm) {
            l.qNorm = w.norm(p + "self_attn.query_layernorm.weight", hd);
            l.kNorm = w.norm(p + "self_attn.key_layernorm.weight", hd);
        }
        l.postNorm = w.norm(p + "post_attention_layernorm.weight", h);
        out.layers.push_back(l);
    }
    w.finish(modelId);
    if (config.int8Activations) {
        // W8A8: every int8 product quantizes its activation rows per token (the output layer's too, a Linear in
        // transformers); layers kept in floating point ("ignore") compute as they are.
        auto mark = [](cpu::Matrix& m) { m.int8Activations = m.type == cpu::Dtype::I8; };
        mark(out.embeddings);
        mark(out.output);
        for (auto& l : out.layers)
            for (auto* m : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down})
                mark(*m);
    }
    bound.memory = w.release();
    return bound;
}

HunyuanCpuModel::HunyuanCpuModel(const HunyuanConfig& config, HunyuanCpuWeights weights)
    : config_(config),
      weights_(std::move(weights)),
      forward_(shapeOf(config, weights_.bf16Activations), weights_.weights),
      adapterViews_(static_cast<std::size_t>(7 * config.layers)) {
    const auto h = config.hidden, hd = config.headDim;
    for (const auto& l : weights_.weights.layers) {
        weightBytesPerToken_ +=
            cpu::bytesOf(l.inputNorm, h) + cpu::bytesOf(l.postNorm, h) + cpu::bytesOf(l.qNorm, hd) + cpu::bytesOf(l.kNorm, hd);
        for (const auto* m : {&l.q, &l.k, &l.v, &l.o, &l.gate, &l.up, &l.down})
            weightBytesPerToken_ += cpu::bytesOf(*m);
    }
    weightBytesPerToken_ += cpu::bytesOf(weights_.weights.output) + cpu::bytesOf(weights_.weights.finalNorm, h);
}

std::vector<LinearModule> HunyuanCpuModel::linears() const {
    return linearModules(config_);
}

std::vector<VocabularyTable> HunyuanCpuModel::vocabularyTables() const {
    // A tied (or missing) output layer reads the embeddings, and a stored copy repeats them.
    if (weights_.tiedOutput) return {{"model.embed_tokens", {"lm_head"}}};
    return {{"model.embed_tokens", {}}, {"lm_head", {}}};
}

std::unique_ptr<CausalState> HunyuanCpuModel::start(std::int64_t maxTokens) const {
    const auto capacity = std::max<std::int64_t>(1, std::min(maxTokens, config_.maxPositions));
    return std::make_unique<CpuState>(config_.layers, config_.kvHeads, capacity, config_.headDim);
}

void HunyuanCpuModel::copyState(const CausalState& from, CausalState& to) const {
    const auto& source = static_cast<const CpuState&>(from).cache;
    auto& target = static_cast<CpuState&>(to).cache;
    const auto length = source.length;
    if (length > target.capacity)
        throw Error("internal", "a cache of " + std::to_string(target.capacity) + " positions cannot take " + std::to_string(length));
    const auto hd = config_.headDim;
    for (std::size_t l = 0; l < source.keys.size(); ++l)
        for (std::int64_t head = 0; head < config_.kvHeads; ++head)
            for (auto [s, t] : {std::pair{source.keys[l], target.keys[l]}, std::pair{source.values[l], target.values[l]}})
                std::memcpy(t + head * target.capacity * hd, s + head * source.capacity * hd,
                            static_cast<std::size_t>(length * hd) * sizeof(float));
    target.length = length;
}

const cpu::Adapter* HunyuanCpuModel::adapterView(CausalState& base) const {
    auto& state = static_cast<CpuState&>(base);
    if (!state.adapter) return nullptr;
    if (state.viewed != state.adapter) {  // a step reads the state's own copy, without the views' lock
        state.view = adapterViews_.of(state.adapter);
        state.viewed = state.adapter;
    }
    return state.view.get();
}

Logits HunyuanCpuModel::forward(CausalState& base, const std::vector<TokenId>& ids, bool allPositions) const {
    auto& state = static_cast<CpuState&>(base);
    const auto t = static_cast<std::int64_t>(ids.size());
    auto logits = Logits::allocate(allPositions ? t : 1, config_.vocabSize);
    forward_.prompt(state.cache, ids.data(), t, adapterView(state), logits.data(), allPositions, state.interrupted);
    return logits;
}

Logits HunyuanCpuModel::stepMany(const std::vector<CausalState*>& states, const std::vector<TokenId>& ids) const {
    const auto rows = static_cast<std::int64_t>(states.size());
    if (rows == 0 || ids.size() != states.size()) throw Error("input", "a batched step feeds one token to each sequence");
    std::vector<cpu::KvCache*> caches;
    std::vector<const cpu::Adapter*> adapters;
    for (auto* state : states) {
        auto& s = static_cast<CpuState&>(*state);
        caches.push_back(&s.cache);
        adapters.push_back(adapterView(s));
    }
    auto logits = Logits::allocate(rows, config_.vocabSize);
    forward_.step(caches.data(), ids.data(), adapters.data(), rows, logits.data());
    return logits;
}

std::vector<std::vector<float>> HunyuanCpuModel::hiddenStates(const std::vector<TokenId>& ids) const {
    auto state = start(static_cast<std::int64_t>(ids.size()));
    std::vector<std::vector<float>> hidden;
    std::vector<float> logits(static_cast<std::size_t>(config_.vocabSize));
    forward_.prompt(static_cast<CpuState&>(*state).cache, ids.data(), static_cast<std::int64_t>(ids.size()), nullptr, logits.data(), false,
                    {}, &hidden);
    return hidden;
}

}  // namespace dragoman
