#include "cpu/marian_forward.h"

#include "cpu/checkpoint_binder.h"
#include "cpu/projection.h"
#include "cpu/rows.h"
#include "kernels/attention.h"
#include "kernels/bf16.h"
#include "kernels/causal_attention.h"
#include "kernels/channel_epilogue.h"
#include "kernels/int8_activation_gemm.h"
#include "kernels/int8_panels.h"
#include "kernels/layer_norm.h"
#include "kernels/row_parts.h"
#include "kernels/silu_mul.h"
#include "kernels/thread_pool.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

namespace dragoman::cpu {

struct PanelsOnce {
    std::once_flag made;
    std::unique_ptr<kernels::Int8Panels> panels;
};

namespace {

constexpr double kLayerNormEps = 1e-5;
// Sources up to this many rows attend through the decoding kernel, all of a run in one call; longer ones through the
// prompt kernel without its mask where it runs (as layers/attention.h's withinEach).
constexpr std::int64_t kKernelRows = 64;
// Rows each kernel thread takes at least when requests' or sources' rows are shared out a part per thread
// (kernels/row_parts.h): as many as the panel products take (fewer go to the one-row kernel, which streams the weights).
constexpr std::int64_t kLeastRowsPerPart = kernels::kPanelRows;

// Bytes of every product's weights (panels as many again, but only those or the mapped weights are read at a time).
std::int64_t weightBytes(const MarianWeights& weights) {
    std::int64_t bytes = 0;
    const auto add = [&](const BiasedMatrix& m) { bytes += bytesOf(m.w); };
    add(weights.output);
    for (const auto& l : weights.encoder)
        for (const auto* m : {&l.self.q, &l.self.k, &l.self.v, &l.self.o, &l.fc1, &l.fc2})
            add(*m);
    for (const auto& l : weights.decoder)
        for (const auto* m : {&l.self.q, &l.self.k, &l.self.v, &l.self.o, &l.cross.q, &l.cross.k, &l.cross.v, &l.cross.o, &l.fc1, &l.fc2})
            add(*m);
    return bytes;
}

kernels::ChannelEpilogue epilogueOf(const BiasedMatrix& m) {
    kernels::ChannelEpilogue epilogue;
    epilogue.scale = m.w.scale;
    epilogue.scalePerTensor = m.w.scalePerTensor;
    epilogue.bias = m.bias;
    return epilogue;
}

const kernels::Int8Panels* madePanels(const BiasedMatrix& m) {
    std::call_once(m.panels->made, [&] {
        m.panels->panels = std::make_unique<kernels::Int8Panels>(static_cast<const std::int8_t*>(m.w.data), m.w.rows, m.w.cols);
    });
    return m.panels->panels.get();
}

// Kept panels serve every row count (int8_activation_gemm.h: a row reads them faster than the mapped codes).
const kernels::Int8Panels* panelsFor(const BiasedMatrix& m) {
    return m.panels ? madePanels(m) : nullptr;
}

// The requests' cached keys and values of decoder layer `layer` (the positions a step will read), queued on the calling
// thread's line feed: the products of the layer before fetch them as they run (kernels::LineFeed), where reading them
// cold made a step's attention wait on memory (a part's attention: 49 µs from cache, ~167 µs in the batched run).
void feedCaches(const MarianStepGroup* groups, std::int64_t count, std::size_t layer, std::int64_t d) {
    auto& feed = kernels::threadLineFeed();
    feed.reset();
    for (std::int64_t g = 0; g < count; ++g) {
        const auto& cache = *groups[g].self;
        // Layer 0's are read by the next step, one position further on.
        const auto positions = std::min(cache.capacity, cache.length + (layer == 0 ? 2 : 1));
        const auto bytes = static_cast<std::size_t>(positions * cache.batch * d) * sizeof(float);
        feed.add(cache.keys[layer], bytes);
        feed.add(cache.values[layer], bytes);
        const auto& source = *groups[g].source;
        feed.add(source.keys[layer], static_cast<std::size_t>(source.length * d) * sizeof(float));
        feed.add(source.values[layer], static_cast<std::size_t>(source.length * d) * sizeof(float));
    }
}

}  // namespace

std::vector<float> marianSinusoids(std::int64_t positions, std::int64_t dim) {
    std::vector<float> table(static_cast<std::size_t>(positions * dim));
    const std::int64_t half = dim / 2;
    // Columns c (sin of j = 2c) and half + c (cos of j = 2c + 1) share the divisor 10000^(2c / dim), computed once per
    // column (a pow per value was a twentieth of a one-sentence process).
    std::vector<double> divisors(static_cast<std::size_t>(half));
    for (std::int64_t c = 0; c < half; ++c)
        divisors[static_cast<std::size_t>(c)] = std::pow(10000.0, 2.0 * static_cast<double>(c) / static_cast<double>(dim));
    for (std::int64_t p = 0; p < positions; ++p) {
        for (std::int64_t c = 0; c < half; ++c) {
            const double angle = static_cast<double>(p) / divisors[static_cast<std::size_t>(c)];
            table[static_cast<std::size_t>(p * dim + c)] = static_cast<float>(std::sin(angle));
            table[static_cast<std::size_t>(p * dim + half + c)] = static_cast<float>(std::cos(angle));
        }
    }
    return table;
}

struct MarianForward::Scratch {
    std::vector<float> x, y, q, k, v, context, h, inner;
    std::vector<std::int64_t> positions;
    std::vector<const Adapter*> adapters;
    std::vector<kernels::AttentionRequest> requests;
    DeltaScratch deltas;

    // An encoder pass's buffers are not kept past the call when they grew large (a long document's pass).
    void trim() {
        constexpr std::size_t kKeptFloats = std::size_t{4} << 20;  // 16 MiB per buffer
        for (auto* buffer : {&x, &y, &q, &k, &v, &context, &h, &inner, &deltas.lowRank, &deltas.delta, &deltas.gathered})
            if (buffer->capacity() > kKeptFloats) std::vector<float>().swap(*buffer);
    }
};

MarianForward::Scratch& MarianForward::threadScratch() {
    thread_local Scratch scratch;
    return scratch;
}

MarianForward::MarianForward(MarianShape shape, MarianWeights weights, bool keepPanels)
    : shape_(shape), weights_(std::move(weights)), positions_(marianSinusoids(shape.maxPositions, shape.d)) {
    // Parts per thread where every thread reading all the weights finds them in the last-level cache.
    const auto cache = kernels::lastLevelCacheBytes();
    rowParts_ = ThreadPool::shared().size() > 1 && cache > 0 && weightBytes(weights_) <= cache;
    if (!keepPanels || !kernels::panelProductsAvailable()) return;
    const auto keep = [this](BiasedMatrix& m) {
        if (!m.w.int8Activations || m.w.type != Dtype::I8) return;
        m.panels = std::make_shared<PanelsOnce>();
        kept_.push_back(&m);
    };
    // In the order a first request needs them (makeNextPanels): the encoder's, the cross keys' and values', the steps'.
    for (auto& l : weights_.encoder)
        for (auto* m : {&l.self.q, &l.self.k, &l.self.v, &l.self.o, &l.fc1, &l.fc2})
            keep(*m);
    for (auto& l : weights_.decoder)
        for (auto* m : {&l.cross.k, &l.cross.v})
            keep(*m);
    for (auto& l : weights_.decoder)
        for (auto* m : {&l.self.q, &l.self.k, &l.self.v, &l.self.o, &l.cross.q, &l.cross.o, &l.fc1, &l.fc2})
            keep(*m);
    keep(weights_.output);
}

bool MarianForward::makeNextPanels() const {
    const auto next = nextKept_.fetch_add(1, std::memory_order_relaxed);
    if (next >= kept_.size()) return false;
    madePanels(*kept_[next]);
    return true;
}

void MarianForward::embed(const std::int64_t* ids, const std::int64_t* positions, std::int64_t count, float* x) const {
    const auto& table = weights_.embeddings;
    const auto d = shape_.d;
    // As MarianModel: the row (8-bit codes times their scale, one rounding), times sqrt(d) in float32, plus the position.
    const auto scale = static_cast<float>(shape_.scaleEmbedding ? std::sqrt(static_cast<double>(d)) : 1.0);
    const bool scaled = table.scale != nullptr;
    for (std::int64_t i = 0; i < count; ++i) {
        const auto id = ids[i];
        const float rowScale = scaled ? table.scale[table.scalePerTensor ? 0 : id] : 1.0f;
        const float* position = positions_.data() + positions[i] * d;
        float* row = x + i * d;
        widenedCodes(table, id * d, d, row);
        for (std::int64_t j = 0; j < d; ++j) {
            float value = row[j];
            if (scaled) value *= rowScale;
            if (shape_.scaleEmbedding) value *= scale;
            row[j] = value + position[j];
        }
    }
}

void MarianForward::linear(const float* x, std::int64_t rows, const BiasedMatrix& m, std::int64_t slot, const Adapter* const* adapters,
                           float* y, Scratch& s) const {
    const auto epilogue = epilogueOf(m);
    if (m.w.int8Activations) {
        kernels::int8ActivationMatmulTransposed(x, static_cast<const std::int8_t*>(m.w.data), y, rows, m.w.rows, m.w.cols, panelsFor(m),
                                                &epilogue);
    } else {
        project(x, rows, m.w, y, false);
        if (epilogue.scale || epilogue.bias) kernels::scaleAndBiasRows(y, rows, m.w.rows, epilogue);
    }
    if (slot >= 0) addAdapterDeltas(x, rows, m.w.cols, m.w.rows, slot, adapters, y, s.deltas);
}

void MarianForward::linears(const float* x, std::int64_t rows, std::initializer_list<const BiasedMatrix*> ms, std::int64_t firstSlot,
                            const Adapter* const* adapters, std::initializer_list<float*> ys, Scratch& s) const {
    const bool int8 = std::all_of(ms.begin(), ms.end(), [](const BiasedMatrix* m) { return m->w.int8Activations; });
    if (!int8 || ms.size() < 2) {
        auto y = ys.begin();
        std::int64_t slot = firstSlot;
        for (const auto* m : ms)
            linear(x, rows, *m, slot++, adapters, *y++, s);
        return;
    }
    std::vector<kernels::ChannelEpilogue> epilogues;
    epilogues.reserve(ms.size());
    std::vector<kernels::Int8Product> products;
    auto y = ys.begin();
    for (const auto* m : ms) {
        epilogues.push_back(epilogueOf(*m));
        products.push_back({static_cast<const std::int8_t*>(m->w.data), m->w.rows, *y++, panelsFor(*m), &epilogues.back()});
    }
    kernels::int8ActivationProducts(x, rows, (*ms.begin())->w.cols, products.data(), products.size());
    y = ys.begin();
    std::int64_t slot = firstSlot;
    for (const auto* m : ms)
        addAdapterDeltas(x, rows, m->w.cols, m->w.rows, slot++, adapters, *y++, s.deltas);
}

void MarianForward::activate(float* x, std::int64_t count) const {
    switch (shape_.activation) {
        case Activation::Swish:
            return kernels::silu(x, x, count);
        case Activation::Gelu:
            return kernels::gelu(x, x, count);
        case Activation::Relu:
            for (std::int64_t i = 0; i < count; ++i)
                x[i] = std::max(x[i], 0.0f);
            return;
    }
}

void MarianForward::addNorm(float*& x, const float* h, const LayerNormWeights& norm, std::int64_t rows, Scratch& s) const {
    float* out = x == s.x.data() ? sized(s.y, rows * shape_.d) : sized(s.x, rows * shape_.d);
    kernels::addLayerNorm(x, h, norm.weight, norm.bias, out, rows, shape_.d, kLayerNormEps);
    x = out;
}

void MarianForward::feedForward(float*& x, const BiasedMatrix& fc1, const BiasedMatrix& fc2, const LayerNormWeights& norm,
                                std::int64_t rows, std::int64_t slot, const Adapter* const* adapters, Scratch& s) const {
    const auto inner = fc1.w.rows;
    float* hidden = sized(s.inner, rows * inner);
    linear(x, rows, fc1, slot, adapters, hidden, s);
    activate(hidden, rows * inner);
    float* h = sized(s.h, rows * shape_.d);
    linear(hidden, rows, fc2, slot + 1, adapters, h, s);
    addNorm(x, h, norm, rows, s);
}

void MarianForward::encoderLayer(std::int64_t index, float*& x, const std::int64_t* lengths, std::int64_t sources, std::int64_t rows,
                                 const Adapter* const* adapters, Scratch& s) const {
    const auto& l = weights_.encoder[static_cast<std::size_t>(index)];
    const auto d = shape_.d, heads = shape_.encoderHeads, hd = d / heads;
    const auto slot = index * kMarianEncoderSlots;
    float *q = sized(s.q, rows * d), *k = sized(s.k, rows * d), *v = sized(s.v, rows * d);
    linears(x, rows, {&l.self.q, &l.self.k, &l.self.v}, slot, adapters, {q, k, v}, s);

    float* context = sized(s.context, rows * d);
    const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
    s.requests.clear();
    std::int64_t runStart = 0, offset = 0;
    const auto flush = [&] {
        if (s.requests.empty()) return;
        kernels::attendOneQueryEach(q + runStart * d, s.requests.data(), static_cast<std::int64_t>(s.requests.size()),
                                    context + runStart * d, heads, 1, hd, scale);
        s.requests.clear();
    };
    for (std::int64_t i = 0; i < sources; ++i) {
        const auto length = lengths[i];
        if (length > kKernelRows && kernels::causalAttentionKernel(hd)) {
            flush();
            kernels::attendAll({q + offset * d, hd, d}, {k + offset * d, 0, hd, d}, {v + offset * d, 0, hd, d}, context + offset * d,
                               length, heads, 1, hd, scale);
        } else {
            // Every query row of the source reads the same keys and values (batch stride 0).
            if (s.requests.empty()) runStart = offset;
            s.requests.push_back({{k + offset * d, 0, hd, d}, {v + offset * d, 0, hd, d}, length, length});
        }
        offset += length;
    }
    flush();

    float* h = sized(s.h, rows * d);
    linear(context, rows, l.self.o, slot + kSelfO, adapters, h, s);
    addNorm(x, h, l.selfNorm, rows, s);
    feedForward(x, l.fc1, l.fc2, l.finalNorm, rows, slot + kEncoderFc1, adapters, s);
}

void MarianForward::encode(const std::int64_t* ids, const std::int64_t* lengths, std::int64_t sources, const Adapter* adapter, float* out,
                           std::vector<std::vector<float>>* hidden) const {
    std::int64_t rows = 0;
    for (std::int64_t i = 0; i < sources; ++i) {
        if (lengths[i] <= 0) throw Error("input", "empty source sequence");
        if (lengths[i] > shape_.maxPositions)
            throw Error("input", "source of " + std::to_string(lengths[i]) + " tokens exceeds the model's " +
                                     std::to_string(shape_.maxPositions) + " positions");
        rows += lengths[i];
    }
    checkIds(ids, rows, shape_.vocab);
    if (const auto bounds = partsOf(lengths, sources); !hidden && !bounds.empty()) {
        kernels::runParts(static_cast<std::int64_t>(bounds.size()) - 1, [&](std::int64_t part) {
            const auto first = bounds[static_cast<std::size_t>(part)], end = bounds[static_cast<std::size_t>(part) + 1];
            std::int64_t before = 0;
            for (std::int64_t i = 0; i < first; ++i)
                before += lengths[i];
            encodeRows(ids + before, lengths + first, end - first, adapter, out + before * shape_.d, nullptr);
        });
        return;
    }
    encodeRows(ids, lengths, sources, adapter, out, hidden);
}

void MarianForward::encodeRows(const std::int64_t* ids, const std::int64_t* lengths, std::int64_t sources, const Adapter* adapter,
                               float* out, std::vector<std::vector<float>>* hidden) const {
    std::int64_t rows = 0;
    for (std::int64_t i = 0; i < sources; ++i)
        rows += lengths[i];
    auto& s = threadScratch();
    const auto d = shape_.d;
    s.positions.clear();
    for (std::int64_t i = 0; i < sources; ++i)
        for (std::int64_t p = 0; p < lengths[i]; ++p)
            s.positions.push_back(p);
    float* x = sized(s.x, rows * d);
    embed(ids, s.positions.data(), rows, x);
    if (hidden) hidden->emplace_back(x, x + rows * d);
    s.adapters.assign(static_cast<std::size_t>(rows), adapter);
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(weights_.encoder.size()); ++i) {
        encoderLayer(i, x, lengths, sources, rows, adapter ? s.adapters.data() : nullptr, s);
        if (hidden) hidden->emplace_back(x, x + rows * d);
    }
    std::copy_n(x, rows * d, out);
    s.trim();
}

void MarianForward::remember(const float* encoded, std::int64_t rows, const Adapter* adapter, float* const* keys,
                             float* const* values) const {
    // Each row's keys and values are its own: rows shared out in equal parts where that pays.
    const auto threads = static_cast<std::int64_t>(ThreadPool::shared().size());
    if (inParts() && rows >= threads * kLeastRowsPerPart) {
        const auto layers = decoderLayers();
        kernels::runParts(threads, [&](std::int64_t part) {
            const auto first = rows * part / threads, end = rows * (part + 1) / threads;
            std::vector<float*> k, v;
            for (std::int64_t l = 0; l < layers; ++l) {
                k.push_back(keys[l] + first * shape_.d);
                v.push_back(values[l] + first * shape_.d);
            }
            rememberRows(encoded + first * shape_.d, end - first, adapter, k.data(), v.data());
        });
        return;
    }
    rememberRows(encoded, rows, adapter, keys, values);
}

void MarianForward::rememberRows(const float* encoded, std::int64_t rows, const Adapter* adapter, float* const* keys,
                                 float* const* values) const {
    auto& s = threadScratch();
    s.adapters.assign(static_cast<std::size_t>(rows), adapter);
    const auto* adapters = adapter ? s.adapters.data() : nullptr;
    const auto firstDecoderSlot = static_cast<std::int64_t>(weights_.encoder.size()) * kMarianEncoderSlots;
    for (std::size_t i = 0; i < weights_.decoder.size(); ++i) {
        const auto& c = weights_.decoder[i].cross;
        const auto slot = firstDecoderSlot + static_cast<std::int64_t>(i) * kMarianDecoderSlots + kCrossK;  // and kCrossV
        linears(encoded, rows, {&c.k, &c.v}, slot, adapters, {keys[i], values[i]}, s);
    }
    s.trim();
}

void MarianForward::decoderLayer(std::int64_t index, float*& x, const MarianStepGroup* groups, std::int64_t count, std::int64_t rows,
                                 const Adapter* const* adapters, Scratch& s) const {
    const auto& l = weights_.decoder[static_cast<std::size_t>(index)];
    const auto d = shape_.d, heads = shape_.decoderHeads, hd = d / heads;
    const auto slot = static_cast<std::int64_t>(weights_.encoder.size()) * kMarianEncoderSlots + index * kMarianDecoderSlots;
    const auto layer = static_cast<std::size_t>(index);
    const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(hd)));
    feedCaches(groups, count, (layer + 1) % static_cast<std::size_t>(decoderLayers()), d);
    float *q = sized(s.q, rows * d), *k = sized(s.k, rows * d), *v = sized(s.v, rows * d);
    linears(x, rows, {&l.self.q, &l.self.k, &l.self.v}, slot, adapters, {q, k, v}, s);

    // Each request's new keys and values go into its cache at its length, then its rows attend over it.
    s.requests.clear();
    std::int64_t row = 0;
    for (std::int64_t g = 0; g < count; ++g) {
        auto& cache = *groups[g].self;
        float *keys = cache.keys[layer], *values = cache.values[layer];
        s.requests.push_back({{keys, d, hd, cache.batch * d},
                              {values, d, hd, cache.batch * d},
                              cache.batch,
                              cache.length + 1,
                              {k + row * d, v + row * d, d, keys, values}});
        row += cache.batch;
    }
    float* context = sized(s.context, rows * d);
    kernels::attendOneQueryEach(q, s.requests.data(), count, context, heads, 1, hd, scale);
    float* h = sized(s.h, rows * d);
    linear(context, rows, l.self.o, slot + kSelfO, adapters, h, s);
    addNorm(x, h, l.selfNorm, rows, s);

    linear(x, rows, l.cross.q, slot + kCrossQ, adapters, q, s);
    s.requests.clear();
    for (std::int64_t g = 0; g < count; ++g) {
        const auto& source = *groups[g].source;
        // One source shared by every hypothesis (batch stride 0), its rows with the heads side by side.
        s.requests.push_back({{source.keys[layer], 0, hd, d}, {source.values[layer], 0, hd, d}, groups[g].self->batch, source.length});
    }
    kernels::attendOneQueryEach(q, s.requests.data(), count, context, heads, 1, hd, scale);
    linear(context, rows, l.cross.o, slot + kCrossO, adapters, h, s);
    addNorm(x, h, l.crossNorm, rows, s);
    feedForward(x, l.fc1, l.fc2, l.finalNorm, rows, slot + kDecoderFc1, adapters, s);
}

void MarianForward::step(const MarianStepGroup* groups, std::int64_t count, float* logits) const {
    if (count <= 0) throw Error("input", "a batched step feeds tokens to each state");
    // Every request is checked before any cache changes.
    for (std::int64_t g = 0; g < count; ++g) {
        const auto& cache = *groups[g].self;
        if (cache.length >= cache.capacity)
            throw Error("input", "output longer than the model's " + std::to_string(cache.capacity) + " positions");
        if (static_cast<std::int64_t>(cache.keys.size()) != decoderLayers() || !groups[g].source ||
            static_cast<std::int64_t>(groups[g].source->keys.size()) != decoderLayers())
            throw Error("internal", "a decoding state of another model");
        checkIds(groups[g].ids, cache.batch, shape_.vocab);
    }
    std::vector<std::int64_t> batches(static_cast<std::size_t>(count));
    for (std::int64_t g = 0; g < count; ++g)
        batches[static_cast<std::size_t>(g)] = groups[g].self->batch;
    if (const auto bounds = partsOf(batches.data(), count); !bounds.empty()) {
        kernels::runParts(static_cast<std::int64_t>(bounds.size()) - 1, [&](std::int64_t part) {
            const auto first = bounds[static_cast<std::size_t>(part)], end = bounds[static_cast<std::size_t>(part) + 1];
            std::int64_t before = 0;
            for (std::int64_t g = 0; g < first; ++g)
                before += batches[static_cast<std::size_t>(g)];
            stepGroups(groups + first, end - first, logits + before * shape_.vocab);
        });
        return;
    }
    stepGroups(groups, count, logits);
}

bool MarianForward::inParts() const {
    return rowParts_ && kernels::rowPartsEnabled();
}

std::vector<std::int64_t> MarianForward::partsOf(const std::int64_t* rows, std::int64_t count) const {
    if (!inParts()) return {};
    return kernels::splitRows(rows, count, ThreadPool::shared().size(), kLeastRowsPerPart);
}

void MarianForward::stepGroups(const MarianStepGroup* groups, std::int64_t count, float* logits) const {
    auto& s = threadScratch();
    std::int64_t rows = 0;
    s.positions.clear();
    s.adapters.clear();
    bool anyAdapter = false;
    for (std::int64_t g = 0; g < count; ++g) {
        const auto& cache = *groups[g].self;
        rows += cache.batch;
        s.positions.insert(s.positions.end(), static_cast<std::size_t>(cache.batch), cache.length);
        s.adapters.insert(s.adapters.end(), static_cast<std::size_t>(cache.batch), groups[g].adapter);
        anyAdapter = anyAdapter || groups[g].adapter;
    }
    const auto d = shape_.d;
    float* x = sized(s.x, rows * d);
    for (std::int64_t g = 0, row = 0; g < count; row += groups[g++].self->batch)
        embed(groups[g].ids, s.positions.data() + row, groups[g].self->batch, x + row * d);
    for (std::int64_t i = 0; i < decoderLayers(); ++i)
        decoderLayer(i, x, groups, count, rows, anyAdapter ? s.adapters.data() : nullptr, s);
    for (std::int64_t g = 0; g < count; ++g)
        groups[g].self->length += 1;
    linear(x, rows, weights_.output, -1, nullptr, logits, s);  // fetching the first layer's caches for the next step
    kernels::threadLineFeed().reset();
}

}  // namespace dragoman::cpu
