#include "cpu/hunyuan_forward.h"

#include "cpu/projection.h"
#include "cpu/rows.h"
#include "kernels/attention.h"
#include "kernels/bf16.h"
#include "kernels/causal_attention.h"
#include "kernels/channel_epilogue.h"
#include "kernels/rms_norm.h"
#include "kernels/rope.h"
#include "kernels/silu_mul.h"
#include "util/error.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace dragoman::cpu {
namespace {

constexpr std::int64_t kSlotsPerLayer = 7;  // q, k, v, o, gate, up, down
enum Slot : std::int64_t { kQ, kK, kV, kO, kGate, kUp, kDown };

void normRows(const NormWeight& w, const float* x, float* out, std::int64_t rows, std::int64_t d, double eps) {
    if (w.type == Dtype::BF16)
        kernels::rmsNorm(x, static_cast<const std::uint16_t*>(w.data), out, rows, d, eps);
    else
        kernels::rmsNorm(x, static_cast<const float*>(w.data), out, rows, d, eps);
}

// An 8-bit matrix's raw products times its per-channel (or per-tensor) scale, in place.
void applyScale(const Matrix& w, float* y, std::int64_t rows) {
    if (!w.scale) return;
    kernels::ChannelEpilogue epilogue;
    epilogue.scale = w.scale;
    epilogue.scalePerTensor = w.scalePerTensor;
    kernels::scaleAndBiasRows(y, rows, w.rows, epilogue);
}

void addInPlace(float* x, const float* y, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i)
        x[i] += y[i];
}

}  // namespace

struct HunyuanForward::Scratch {
    std::vector<float> h, q, k, v, context, out, gate, up, cos, sin;
    DeltaScratch deltas;
    std::vector<std::int64_t> positions;
    std::vector<const Adapter*> adapters;
    std::vector<kernels::AttentionRequest> requests;

    // A long prompt's buffers are not kept past the call: every request thread has its own scratch, and each would
    // otherwise hold its longest prompt's activations for good (hundreds of MB for a few thousand tokens).
    void trim() {
        constexpr std::size_t kKeptFloats = std::size_t{4} << 20;  // 16 MiB per buffer
        for (auto* buffer : {&h, &q, &k, &v, &context, &out, &gate, &up, &cos, &sin, &deltas.lowRank, &deltas.delta, &deltas.gathered})
            if (buffer->capacity() > kKeptFloats) std::vector<float>().swap(*buffer);
    }
};

HunyuanForward::HunyuanForward(HunyuanShape shape, HunyuanWeights weights) : shape_(shape), weights_(std::move(weights)) {
    // inv_freq as transformers computes it: 1 / base^(arange(0, d, 2) / d), all in float32.
    const auto half = shape_.headDim / 2;
    const auto base = static_cast<float>(shape_.ropeBase);
    for (std::int64_t i = 0; i < half; ++i) {
        const float exponent = static_cast<float>(2 * i) / static_cast<float>(shape_.headDim);
        inverseFrequencies_.push_back(1.0f / std::pow(base, exponent));
    }
}

void HunyuanForward::embed(const std::int64_t* ids, std::int64_t count, float* x) const {
    const auto& table = weights_.embeddings;
    const auto h = shape_.hidden;
    for (std::int64_t i = 0; i < count; ++i) {
        const auto id = ids[i];
        // Codes times their row's scale, one float32 rounding: exactly the dequantized table's row.
        const float scale = table.scale ? table.scale[table.scalePerTensor ? 0 : id] : 1.0f;
        for (std::int64_t j = 0; j < h; ++j)
            x[i * h + j] = table.scale ? widenedCode(table, id * h + j) * scale : widenedCode(table, id * h + j);
    }
}

void HunyuanForward::linear(const float* x, std::int64_t rows, const Matrix& w, std::int64_t slot, const Adapter* const* adapters, float* y,
                            Scratch& s) const {
    project(x, rows, w, y, shape_.bf16Activations);
    applyScale(w, y, rows);
    addAdapterDeltas(x, rows, w.cols, w.rows, slot, adapters, y, s.deltas);
}

void HunyuanForward::rotate(float* rows, std::int64_t heads, std::int64_t count, const Scratch& s) const {
    const auto d = shape_.headDim;
    for (std::int64_t i = 0; i < count; ++i)
        kernels::applyRope(rows + i * heads * d, heads, d, s.cos.data() + i * d, s.sin.data() + i * d, 1);
}

void HunyuanForward::layer(std::int64_t index, KvCache* const* caches, const Adapter* const* adapters, std::int64_t rows, bool oneSequence,
                           float* x, Scratch& s) const {
    const auto& l = weights_.layers[static_cast<std::size_t>(index)];
    const auto h = shape_.hidden, heads = shape_.heads, kvHeads = shape_.kvHeads, d = shape_.headDim, inner = shape_.intermediate;
    const auto qWidth = heads * d, kvWidth = kvHeads * d, group = heads / kvHeads;
    const auto slot = index * kSlotsPerLayer;
    const Adapter* first = adapters ? adapters[0] : nullptr;
    const bool sameAdapter =
        oneSequence || !adapters || std::all_of(adapters, adapters + rows, [&](const Adapter* a) { return a == first; });

    // One decoding row through several matrices: one pass over all their weights (cpu/projection.h), scaled and
    // given the adapter's deltas each; otherwise a product per matrix.
    const auto together = [&](const float* in, std::initializer_list<std::pair<const Matrix*, std::int64_t>> outputs,
                              std::initializer_list<float*> ys) {
        std::vector<const Matrix*> ws;
        for (const auto& o : outputs)
            ws.push_back(o.first);
        if (rows == 1 && sameAdapter &&
            projectRowTogether(in, ws.front()->cols, ws.data(), ys.begin(), ws.size(), shape_.bf16Activations)) {
            auto y = ys.begin();
            for (const auto& o : outputs) {
                applyScale(*o.first, *y, 1);
                addAdapterDeltas(in, 1, o.first->cols, o.first->rows, slot + o.second, adapters, *y, s.deltas);
                ++y;
            }
            return;
        }
        auto y = ys.begin();
        for (const auto& o : outputs)
            linear(in, rows, *o.first, slot + o.second, adapters, *y++, s);
    };

    float* normed = sized(s.h, rows * h);
    normRows(l.inputNorm, x, normed, rows, h, shape_.rmsEps);
    float *q = sized(s.q, rows * qWidth), *k = sized(s.k, rows * kvWidth), *v = sized(s.v, rows * kvWidth);
    together(normed, {{&l.q, kQ}, {&l.k, kK}, {&l.v, kV}}, {q, k, v});
    rotate(q, heads, rows, s);
    rotate(k, kvHeads, rows, s);
    if (shape_.qkNorm) {  // after RoPE, as transformers' HunYuanDenseV1Attention
        normRows(l.qNorm, q, q, rows * heads, d, shape_.rmsEps);
        normRows(l.kNorm, k, k, rows * kvHeads, d, shape_.rmsEps);
    }
    for (std::int64_t r = 0; r < rows; ++r) {
        KvCache& cache = *caches[oneSequence ? 0 : r];
        const auto position = s.positions[static_cast<std::size_t>(r)];
        for (std::int64_t g = 0; g < kvHeads; ++g) {
            std::copy_n(k + r * kvWidth + g * d, d, cache.keys[static_cast<std::size_t>(index)] + (g * cache.capacity + position) * d);
            std::copy_n(v + r * kvWidth + g * d, d, cache.values[static_cast<std::size_t>(index)] + (g * cache.capacity + position) * d);
        }
    }
    float* context = sized(s.context, rows * qWidth);
    const auto scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(d)));
    const auto layouts = [&](const KvCache& cache) {
        const auto i = static_cast<std::size_t>(index);
        return std::pair<kernels::KvLayout, kernels::KvLayout>{{cache.keys[i], 0, cache.capacity * d, d},
                                                               {cache.values[i], 0, cache.capacity * d, d}};
    };
    if (oneSequence) {
        const auto [keys, values] = layouts(*caches[0]);
        const auto start = caches[0]->length;
        if (rows == 1) {
            kernels::attendOneQuery(q, keys, values, context, 1, heads, group, start + 1, d, scale);
        } else if (kernels::causalAttentionKernel(d)) {
            kernels::attendCausal({q, d, qWidth}, keys, values, context, rows, start, heads, group, d, scale);
        } else {
            for (std::int64_t r = 0; r < rows; ++r)  // each row over the keys up to its own position
                kernels::attendOneQuery(q + r * qWidth, keys, values, context + r * qWidth, 1, heads, group, start + r + 1, d, scale);
        }
    } else {
        s.requests.clear();
        for (std::int64_t r = 0; r < rows; ++r) {
            const auto [keys, values] = layouts(*caches[r]);
            s.requests.push_back({keys, values, 1, caches[r]->length + 1});
        }
        kernels::attendOneQueryEach(q, s.requests.data(), rows, context, heads, group, d, scale);
    }
    float* out = sized(s.out, rows * h);
    linear(context, rows, l.o, slot + kO, adapters, out, s);
    addInPlace(x, out, rows * h);

    normRows(l.postNorm, x, normed, rows, h, shape_.rmsEps);
    float *gate = sized(s.gate, rows * inner), *up = sized(s.up, rows * inner);
    together(normed, {{&l.gate, kGate}, {&l.up, kUp}}, {gate, up});
    kernels::siluMul(gate, up, gate, rows * inner);
    linear(gate, rows, l.down, slot + kDown, adapters, out, s);
    addInPlace(x, out, rows * h);
}

void HunyuanForward::head(const float* x, std::int64_t rows, float* logits, Scratch& s) const {
    float* normed = sized(s.h, rows * shape_.hidden);
    normRows(weights_.finalNorm, x, normed, rows, shape_.hidden, shape_.rmsEps);
    project(normed, rows, weights_.output, logits, shape_.bf16Activations);
    applyScale(weights_.output, logits, rows);
}

namespace {

// Angles as transformers makes them: position times inv_freq in float32, the table [cos | cos] and [sin | sin].
void rotaryTables(const std::vector<float>& inverseFrequencies, const std::vector<std::int64_t>& positions, std::vector<float>& cos,
                  std::vector<float>& sin) {
    const auto half = static_cast<std::int64_t>(inverseFrequencies.size()), d = 2 * half;
    const auto rows = static_cast<std::int64_t>(positions.size());
    float* c = sized(cos, rows * d);
    float* s = sized(sin, rows * d);
    for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t j = 0; j < half; ++j) {
            const float angle =
                static_cast<float>(positions[static_cast<std::size_t>(r)]) * inverseFrequencies[static_cast<std::size_t>(j)];
            c[r * d + j] = c[r * d + half + j] = std::cos(angle);
            s[r * d + j] = s[r * d + half + j] = std::sin(angle);
        }
}

}  // namespace

HunyuanForward::Scratch& HunyuanForward::threadScratch() {
    thread_local Scratch scratch;
    return scratch;
}

void HunyuanForward::prompt(KvCache& cache, const std::int64_t* ids, std::int64_t count, const Adapter* adapter, float* logits,
                            bool allPositions, const std::function<bool()>& interrupted, std::vector<std::vector<float>>* hidden) const {
    if (count <= 0) throw Error("input", "no tokens to run");
    if (cache.length + count > cache.capacity)
        throw Error("input", "sequence of " + std::to_string(cache.length + count) + " tokens exceeds the cache of " +
                                 std::to_string(cache.capacity) + " (the model allows " + std::to_string(shape_.maxPositions) + ")");
    checkIds(ids, count, shape_.vocab);
    auto& s = threadScratch();
    const auto h = shape_.hidden;
    std::vector<float> x(static_cast<std::size_t>(count * h));  // the residual stream: the caller's rows (scratch is for layers)
    embed(ids, count, x.data());
    if (hidden) hidden->push_back(x);
    s.positions.resize(static_cast<std::size_t>(count));
    for (std::int64_t i = 0; i < count; ++i)
        s.positions[static_cast<std::size_t>(i)] = cache.length + i;
    rotaryTables(inverseFrequencies_, s.positions, s.cos, s.sin);
    s.adapters.assign(static_cast<std::size_t>(count), adapter);
    KvCache* caches[] = {&cache};
    for (std::int64_t i = 0; i < layers(); ++i) {
        if (count > 1 && interrupted && interrupted()) throw Cancelled("prompt stopped");
        layer(i, caches, adapter ? s.adapters.data() : nullptr, count, true, x.data(), s);
        if (hidden) hidden->push_back(x);
    }
    cache.length += count;
    if (hidden) {
        std::vector<float> normed(x.size());
        normRows(weights_.finalNorm, x.data(), normed.data(), count, h, shape_.rmsEps);
        hidden->push_back(std::move(normed));
    }
    if (allPositions)
        head(x.data(), count, logits, s);
    else
        head(x.data() + (count - 1) * h, 1, logits, s);
    s.trim();
}

void HunyuanForward::step(KvCache* const* caches, const std::int64_t* ids, const Adapter* const* adapters, std::int64_t rows,
                          float* logits) const {
    if (rows <= 0) throw Error("input", "a batched step feeds one token to each sequence");
    for (std::int64_t r = 0; r < rows; ++r)
        if (caches[r]->length + 1 > caches[r]->capacity)
            throw Error("input", "sequence of " + std::to_string(caches[r]->length + 1) + " tokens exceeds the cache of " +
                                     std::to_string(caches[r]->capacity));
    checkIds(ids, rows, shape_.vocab);
    auto& s = threadScratch();
    std::vector<float> x(static_cast<std::size_t>(rows * shape_.hidden));
    embed(ids, rows, x.data());
    s.positions.resize(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r)
        s.positions[static_cast<std::size_t>(r)] = caches[r]->length;
    rotaryTables(inverseFrequencies_, s.positions, s.cos, s.sin);
    const bool anyAdapter = adapters && std::any_of(adapters, adapters + rows, [](const Adapter* a) { return a != nullptr; });
    for (std::int64_t i = 0; i < layers(); ++i)
        layer(i, caches, anyAdapter ? adapters : nullptr, rows, false, x.data(), s);
    for (std::int64_t r = 0; r < rows; ++r)
        caches[r]->length += 1;
    head(x.data(), rows, logits, s);
}

}  // namespace dragoman::cpu
