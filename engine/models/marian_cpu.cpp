#include "models/marian_cpu.h"

#include "cpu/checkpoint_binder.h"
#include "cpu/projection.h"
#include "kernels/thread_pool.h"
#include "runtime/torch_backend.h"
#include "util/error.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <numeric>
#include <tuple>

namespace dragoman {
namespace {

// Keys real hub files store as copies of model.shared (transformers ties them).
constexpr const char* kMarianTableAliases[] = {"model.encoder.embed_tokens", "model.decoder.embed_tokens", "lm_head"};
constexpr const char* kAttentionNames[] = {"q_proj", "k_proj", "v_proj", "out_proj"};
// A model whose W8A8 weights take at most this much keeps their panels (as layers/linear.h's keepPanelsOfSmallModel).
constexpr std::int64_t kKeptPanelBytes = std::int64_t{512} << 20;

// Every linear layer in slot order (cpu/marian_forward.h), named and shaped as the checkpoint stores them.
std::vector<LinearModule> linearModules(const MarianConfig& c) {
    std::vector<LinearModule> modules;
    const auto add = [&](const std::string& name, std::int64_t out, std::int64_t in) {
        modules.push_back({name, out, in, static_cast<int>(modules.size())});
    };
    const auto d = c.dModel;
    for (std::int64_t i = 0; i < c.encoderLayers; ++i) {
        const std::string p = "model.encoder.layers." + std::to_string(i) + ".";
        for (const auto* name : kAttentionNames)
            add(p + "self_attn." + name, d, d);
        add(p + "fc1", c.encoderFfn, d);
        add(p + "fc2", d, c.encoderFfn);
    }
    for (std::int64_t i = 0; i < c.decoderLayers; ++i) {
        const std::string p = "model.decoder.layers." + std::to_string(i) + ".";
        for (const auto* name : kAttentionNames)
            add(p + "self_attn." + name, d, d);
        for (const auto* name : kAttentionNames)
            add(p + "encoder_attn." + name, d, d);
        add(p + "fc1", c.decoderFfn, d);
        add(p + "fc2", d, c.decoderFfn);
    }
    return modules;
}

// The linear layers adapters may target (cpu/marian_forward.h's slots).
std::size_t slotCount(const MarianConfig& c) {
    return static_cast<std::size_t>(c.encoderLayers * cpu::kMarianEncoderSlots + c.decoderLayers * cpu::kMarianDecoderSlots);
}

cpu::MarianShape shapeOf(const MarianConfig& c) {
    cpu::MarianShape shape;
    shape.d = c.dModel;
    shape.encoderHeads = c.encoderHeads;
    shape.decoderHeads = c.decoderHeads;
    shape.encoderFfn = c.encoderFfn;
    shape.decoderFfn = c.decoderFfn;
    shape.vocab = c.vocabSize;
    shape.maxPositions = c.maxPositions;
    shape.scaleEmbedding = c.scaleEmbedding;
    shape.activation = c.activation == "relu"   ? cpu::Activation::Relu
                       : c.activation == "gelu" ? cpu::Activation::Gelu
                                                : cpu::Activation::Swish;
    return shape;
}

// Sources encoded in one pass keep their cross keys and values where the pass wrote them: per decoder layer the keys
// of every row of the pass, then their values, [rows, d] each. A source is rows [offset, offset + length) of each.
class MarianMemoryRows : public SourceMemory {
public:
    MarianMemoryRows(std::shared_ptr<float[]> pass, std::int64_t layers, std::int64_t passRows, std::int64_t offset, std::int64_t length,
                     std::int64_t d)
        : buffer(std::move(pass)) {
        cache.length = length;
        for (std::int64_t l = 0; l < layers; ++l) {
            cache.keys.push_back(buffer.get() + (2 * l * passRows + offset) * d);
            cache.values.push_back(buffer.get() + ((2 * l + 1) * passRows + offset) * d);
        }
    }

    std::shared_ptr<float[]> buffer;  // the pass's, shared by its sources
    cpu::MarianSourceCache cache;
};

// Sources [first, end) in an order whose consecutive runs split evenly into `parts` (the encoder shares a pass out
// a run of consecutive sources per kernel thread): longest first, each to the run with the fewest rows so far, the
// runs one after another; within a run, as they came.
std::vector<std::size_t> evenOrder(const std::vector<std::vector<TokenId>>& sources, std::size_t first, std::size_t end,
                                   std::size_t parts) {
    std::vector<std::size_t> byLength(end - first);
    std::iota(byLength.begin(), byLength.end(), first);
    if (parts < 2 || byLength.size() < parts) return byLength;
    std::stable_sort(byLength.begin(), byLength.end(), [&](std::size_t a, std::size_t b) { return sources[a].size() > sources[b].size(); });
    std::vector<std::vector<std::size_t>> runs(parts);
    std::vector<std::size_t> rows(parts, 0);
    for (const auto i : byLength) {
        const auto lightest = static_cast<std::size_t>(std::min_element(rows.begin(), rows.end()) - rows.begin());
        runs[lightest].push_back(i);
        rows[lightest] += sources[i].size();
    }
    std::vector<std::size_t> order;
    for (auto& run : runs) {
        std::sort(run.begin(), run.end());
        order.insert(order.end(), run.begin(), run.end());
    }
    return order;
}

class MarianDecoding : public DecoderState {
public:
    std::int64_t length() const override { return cache.length; }

    std::shared_ptr<float[]> buffer;  // from the model's pool of caches, which takes it back
    std::shared_ptr<const MarianMemoryRows> source;
    std::shared_ptr<const cpu::Adapter> view;  // the adapter as the forward reads it
    cpu::MarianSelfCache cache;
};

}  // namespace

MarianCpuWeights bindMarianCheckpoint(const MarianConfig& config, const Checkpoint& checkpoint, const std::string& modelId) {
    cpu::CheckpointBinder w(checkpoint);
    const auto d = config.dModel;
    MarianCpuWeights bound;
    auto& out = bound.weights;
    out.embeddings = w.matrix("model.shared.weight", config.vocabSize, d, true);
    out.output.w = out.embeddings;
    out.output.bias = w.floats("final_logits_bias", {1, config.vocabSize});  // [1, vocab], read as [vocab]
    for (const auto* alias : kMarianTableAliases) {
        w.acceptCopy(alias + std::string(".weight"), "model.shared.weight");
        w.acceptCopy(alias + std::string(".weight_scale"), "model.shared.weight_scale");
    }
    const auto positions = cpu::marianSinusoids(config.maxPositions, d);
    w.acceptCopy("model.encoder.embed_positions.weight", positions, {config.maxPositions, d});
    w.acceptCopy("model.decoder.embed_positions.weight", positions, {config.maxPositions, d});

    const auto linear = [&](const std::string& prefix, std::int64_t rows, std::int64_t cols) {
        cpu::BiasedMatrix m;
        m.w = w.matrix(prefix + "weight", rows, cols);
        m.bias = w.floats(prefix + "bias", {rows});
        // A static activation scale only matters where activations are quantized; they stay float32 here.
        w.ignore(prefix + "input_scale");
        return m;
    };
    const auto attention = [&](const std::string& prefix) {
        return cpu::MarianAttentionWeights{linear(prefix + "q_proj.", d, d), linear(prefix + "k_proj.", d, d),
                                           linear(prefix + "v_proj.", d, d), linear(prefix + "out_proj.", d, d)};
    };
    const auto norm = [&](const std::string& prefix) {
        return cpu::LayerNormWeights{w.floats(prefix + "weight", {d}), w.floats(prefix + "bias", {d})};
    };
    for (std::int64_t i = 0; i < config.encoderLayers; ++i) {
        const std::string p = "model.encoder.layers." + std::to_string(i) + ".";
        cpu::MarianEncoderLayerWeights l;
        l.self = attention(p + "self_attn.");
        l.selfNorm = norm(p + "self_attn_layer_norm.");
        l.fc1 = linear(p + "fc1.", config.encoderFfn, d);
        l.fc2 = linear(p + "fc2.", d, config.encoderFfn);
        l.finalNorm = norm(p + "final_layer_norm.");
        out.encoder.push_back(std::move(l));
    }
    for (std::int64_t i = 0; i < config.decoderLayers; ++i) {
        const std::string p = "model.decoder.layers." + std::to_string(i) + ".";
        cpu::MarianDecoderLayerWeights l;
        l.self = attention(p + "self_attn.");
        l.selfNorm = norm(p + "self_attn_layer_norm.");
        l.cross = attention(p + "encoder_attn.");
        l.crossNorm = norm(p + "encoder_attn_layer_norm.");
        l.fc1 = linear(p + "fc1.", config.decoderFfn, d);
        l.fc2 = linear(p + "fc2.", d, config.decoderFfn);
        l.finalNorm = norm(p + "final_layer_norm.");
        out.decoder.push_back(std::move(l));
    }
    w.finish(modelId);
    if (config.int8Activations) {
        // W8A8: every int8 product quantizes its activation rows per token (the output layer's too); layers kept in
        // floating point compute as they are.
        const auto mark = [&](cpu::BiasedMatrix& m) {
            m.w.int8Activations = m.w.type == cpu::Dtype::I8;
            if (m.w.int8Activations) bound.int8ActivationBytes += m.w.rows * m.w.cols;
        };
        mark(out.output);
        for (auto& l : out.encoder)
            for (auto* m : {&l.self.q, &l.self.k, &l.self.v, &l.self.o, &l.fc1, &l.fc2})
                mark(*m);
        for (auto& l : out.decoder)
            for (auto* m : {&l.self.q, &l.self.k, &l.self.v, &l.self.o, &l.cross.q, &l.cross.k, &l.cross.v, &l.cross.o, &l.fc1, &l.fc2})
                mark(*m);
    }
    bound.memory = w.release();
    return bound;
}

MarianCpuModel::MarianCpuModel(const MarianConfig& config, MarianCpuWeights weights)
    : config_(config),
      weights_(std::move(weights)),
      forward_(shapeOf(config), weights_.weights, weights_.int8ActivationBytes <= kKeptPanelBytes),
      adapterViews_(slotCount(config)),
      cachePool_(FloatPool::make("decoder caches")),
      sourcePool_(FloatPool::make("encoded sources")),
      logitsPool_(FloatPool::make("logits")) {
    const auto stable = [&](const cpu::BiasedMatrix& m) { encoderRowStable_ = encoderRowStable_ && cpu::rowStableAtAnyCount(m.w, false); };
    for (const auto& l : weights_.weights.encoder)
        for (const auto* m : {&l.self.q, &l.self.k, &l.self.v, &l.self.o, &l.fc1, &l.fc2})
            stable(*m);
    for (const auto& l : weights_.weights.decoder)
        for (const auto* m : {&l.cross.k, &l.cross.v})
            stable(*m);
}

std::vector<LinearModule> MarianCpuModel::linears() const {
    return linearModules(config_);
}

std::vector<VocabularyTable> MarianCpuModel::vocabularyTables() const {
    return {{"model.shared", {std::begin(kMarianTableAliases), std::end(kMarianTableAliases)}}};
}

std::size_t MarianCpuModel::cachedBytes() const {
    return cachePool_->bytesHeld() + sourcePool_->bytesHeld() + logitsPool_->bytesHeld();
}

std::vector<std::shared_ptr<const SourceMemory>> MarianCpuModel::encodeSources(const std::vector<std::vector<TokenId>>& sources,
                                                                               const LoraSet* adapter) const {
    // A view of the adapter for this call (views are pointers into its tensors).
    const auto made = adapter ? torchBackend().cpuAdapterOf(*adapter, slotCount(config_)) : nullptr;
    const cpu::Adapter* view = made.get();
    // Products whose sums depend on the row count encode each source alone: the model's (known since it was built) or
    // the adapter's on the encoder's and the cross keys' and values' slots.
    bool rowStable = encoderRowStable_;
    if (view) {
        const auto encoderSlots = config_.encoderLayers * cpu::kMarianEncoderSlots;
        for (std::int64_t slot = 0; slot < static_cast<std::int64_t>(slotCount(config_)); ++slot) {
            const auto within = (slot - encoderSlots) % cpu::kMarianDecoderSlots;
            const bool read = slot < encoderSlots || within == cpu::kCrossK || within == cpu::kCrossV;
            if (const auto* d = view->at(slot); read && d)
                rowStable = rowStable && cpu::rowStableAtAnyCount(d->a, false) && cpu::rowStableAtAnyCount(d->b, false);
        }
    }

    const auto d = config_.dModel, layers = config_.decoderLayers;
    std::vector<std::shared_ptr<const SourceMemory>> memories;
    thread_local std::vector<float> encoded;
    for (std::size_t first = 0; first < sources.size();) {
        std::size_t end = first + 1;
        auto rows = static_cast<std::int64_t>(sources[first].size());
        while (rowStable && end < sources.size() && rows + static_cast<std::int64_t>(sources[end].size()) <= kMostSourceRowsPerPass)
            rows += static_cast<std::int64_t>(sources[end++].size());
        const auto parts = forward_.inParts() ? static_cast<std::size_t>(ThreadPool::shared().size()) : 1;
        const auto order = evenOrder(sources, first, end, parts);
        std::vector<std::int64_t> ids, lengths;
        for (const auto i : order) {
            ids.insert(ids.end(), sources[i].begin(), sources[i].end());
            lengths.push_back(static_cast<std::int64_t>(sources[i].size()));
        }
        encoded.resize(static_cast<std::size_t>(rows * d));
        forward_.encode(ids.data(), lengths.data(), static_cast<std::int64_t>(lengths.size()), view, encoded.data());
        // Every source's rows through each layer's two products at once, into memory its sources share (sizes rounded
        // up, so that later passes find it in the pool).
        constexpr std::int64_t kRowsRounded = 64;
        auto pass = sourcePool_->take(2 * layers * ((rows + kRowsRounded - 1) / kRowsRounded * kRowsRounded) * d);
        std::vector<float*> k, v;
        for (std::int64_t l = 0; l < layers; ++l) {
            k.push_back(pass.get() + 2 * l * rows * d);
            v.push_back(pass.get() + (2 * l + 1) * rows * d);
        }
        forward_.remember(encoded.data(), rows, view, k.data(), v.data());
        if (encoded.size() > (std::size_t{4} << 20)) std::vector<float>().swap(encoded);  // a long document's pass
        memories.resize(end);
        std::int64_t offset = 0;
        for (std::size_t j = 0; j < order.size(); ++j) {
            memories[order[j]] = std::make_shared<MarianMemoryRows>(pass, layers, rows, offset, lengths[j], d);
            offset += lengths[j];
        }
        first = end;
    }
    return memories;
}

std::vector<float> MarianCpuModel::encoderOutput(const std::vector<TokenId>& source, const LoraSet* adapter) const {
    const auto made = adapter ? torchBackend().cpuAdapterOf(*adapter, slotCount(config_)) : nullptr;
    const auto length = static_cast<std::int64_t>(source.size());
    std::vector<float> out(static_cast<std::size_t>(length * config_.dModel));
    forward_.encode(source.data(), &length, 1, made.get(), out.data());
    return out;
}

std::vector<std::vector<float>> MarianCpuModel::encoderHiddenStates(const std::vector<TokenId>& source) const {
    const auto length = static_cast<std::int64_t>(source.size());
    std::vector<float> out(static_cast<std::size_t>(length * config_.dModel));
    std::vector<std::vector<float>> hidden;
    forward_.encode(source.data(), &length, 1, nullptr, out.data(), &hidden);
    return hidden;
}

std::unique_ptr<DecoderState> MarianCpuModel::startDecoding(std::shared_ptr<const SourceMemory> source, std::int64_t batch,
                                                            std::int64_t maxSteps, std::shared_ptr<const LoraSet> adapter) const {
    auto memory = std::dynamic_pointer_cast<const MarianMemoryRows>(std::move(source));
    if (!memory || static_cast<std::int64_t>(memory->cache.keys.size()) != config_.decoderLayers)
        throw Error("internal", "a source remembered by another model cannot start this Marian model's decoding");
    if (batch < 1) throw Error("input", "decoding needs at least one hypothesis");
    auto state = std::make_unique<MarianDecoding>();
    state->source = std::move(memory);
    state->view = adapterViews_.of(adapter);
    state->adapter = std::move(adapter);
    const auto capacity = std::max<std::int64_t>(1, std::min(maxSteps, config_.maxPositions));
    const auto perTable = capacity * batch * config_.dModel;  // [capacity, batch, heads, headDim]
    state->buffer = cachePool_->take(2 * config_.decoderLayers * perTable);
    state->cache.batch = batch;
    state->cache.capacity = capacity;
    for (std::int64_t l = 0; l < config_.decoderLayers; ++l) {
        state->cache.keys.push_back(state->buffer.get() + (2 * l) * perTable);
        state->cache.values.push_back(state->buffer.get() + (2 * l + 1) * perTable);
    }
    return state;
}

Logits MarianCpuModel::stepMany(const std::vector<DecoderState*>& states, const std::vector<std::vector<TokenId>>& tokens) const {
    if (states.empty() || states.size() != tokens.size()) throw Error("input", "a batched step feeds tokens to each state");
    std::vector<cpu::MarianStepGroup> groups;
    std::int64_t rows = 0;
    for (std::size_t i = 0; i < states.size(); ++i) {
        auto& state = static_cast<MarianDecoding&>(*states[i]);
        if (static_cast<std::int64_t>(tokens[i].size()) != state.cache.batch)
            throw Error("input", "a batched step feeds one token to each hypothesis");
        groups.push_back({&state.cache, &state.source->cache, state.view.get(), tokens[i].data()});
        rows += state.cache.batch;
    }
    auto memory = logitsPool_->take(rows * config_.vocabSize);
    float* logits = memory.get();
    forward_.step(groups.data(), static_cast<std::int64_t>(groups.size()), logits);
    return {std::move(memory), logits, rows, config_.vocabSize};
}

void MarianCpuModel::reorder(DecoderState& base, const std::vector<std::int64_t>& beams) const {
    auto& state = static_cast<MarianDecoding&>(base);
    auto& cache = state.cache;
    if (static_cast<std::int64_t>(beams.size()) != cache.batch) throw Error("internal", "a reorder names one source per hypothesis");
    for (const auto b : beams)
        if (b < 0 || b >= cache.batch) throw Error("internal", "a reorder names a hypothesis that does not exist");
    const auto filled = cache.length;
    if (filled == 0) return;
    // Only the filled positions move: at each, the hypotheses' rows are taken in the beams' order.
    const auto width = config_.dModel;  // a hypothesis's heads at one position
    std::vector<float> before(static_cast<std::size_t>(cache.batch * width));
    for (auto* tables : {&cache.keys, &cache.values})
        for (auto* table : *tables)
            for (std::int64_t t = 0; t < filled; ++t) {
                float* position = table + t * cache.batch * width;
                std::copy_n(position, cache.batch * width, before.data());
                for (std::int64_t b = 0; b < cache.batch; ++b)
                    std::copy_n(before.data() + beams[static_cast<std::size_t>(b)] * width, width, position + b * width);
            }
}

}  // namespace dragoman
