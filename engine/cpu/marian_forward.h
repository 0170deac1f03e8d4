#pragma once
// MarianMTModel (Helsinki-NLP OPUS-MT, the bundled model) on the CPU kernels over raw buffers, without libtorch: the
// numbers of models/marian.h's MarianModel on the CPU kernels, the same kernels in the same order (post-LN layers,
// embeddings scaled by sqrt(d_model) plus sinusoidal positions, the shared table as the output layer plus
// final_logits_bias), with the weights as mapped (cpu/matrix.h). A program that translates with a Marian model then
// never loads libtorch, whose start costs a third of a second.
//
// Sources are encoded with their rows stacked, attention within each; decoding steps run every hypothesis of several
// requests together, each request's rows over its own caches: a row gets the numbers of its step alone.
#include "cpu/adapter_deltas.h"
#include "cpu/matrix.h"

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

namespace dragoman::kernels {
class Int8Panels;
}

namespace dragoman::cpu {

enum class Activation { Swish, Relu, Gelu };

struct MarianShape {
    std::int64_t d = 0, encoderHeads = 0, decoderHeads = 0, encoderFfn = 0, decoderFfn = 0, vocab = 0, maxPositions = 0;
    bool scaleEmbedding = true;  // embeddings times sqrt(d)
    Activation activation = Activation::Swish;
};

// A W8A8 weight's panels (kernels/int8_panels.h), made once by the first product of many rows.
struct PanelsOnce;

// A linear layer: the weight with its float32 bias (may be null).
struct BiasedMatrix {
    Matrix w;
    const float* bias = nullptr;
    std::shared_ptr<PanelsOnce> panels;  // set where the model keeps W8A8 panels
};

struct LayerNormWeights {
    const float* weight = nullptr;  // float32 [d]
    const float* bias = nullptr;
};

struct MarianAttentionWeights {
    BiasedMatrix q, k, v, o;
};

struct MarianEncoderLayerWeights {
    MarianAttentionWeights self;
    LayerNormWeights selfNorm, finalNorm;
    BiasedMatrix fc1, fc2;
};

struct MarianDecoderLayerWeights {
    MarianAttentionWeights self, cross;
    LayerNormWeights selfNorm, crossNorm, finalNorm;
    BiasedMatrix fc1, fc2;
};

struct MarianWeights {
    Matrix embeddings;    // [vocab, d], the shared table; 8-bit with its row (or tensor) scales
    BiasedMatrix output;  // the table again (W8A8 where the model is), with final_logits_bias
    std::vector<MarianEncoderLayerWeights> encoder;
    std::vector<MarianDecoderLayerWeights> decoder;
};

// Adapter slots, as MarianModel numbers its Linears: per encoder layer q, k, v, o, fc1, fc2; then per decoder layer
// self q, k, v, o, cross q, k, v, o, fc1, fc2 (the offsets within a layer below).
constexpr std::int64_t kMarianEncoderSlots = 6, kMarianDecoderSlots = 10;
enum MarianSlot : std::int64_t {
    kSelfQ = 0,
    kSelfO = 3,
    kEncoderFc1 = 4,
    kCrossQ = 4,
    kCrossK = 5,
    kCrossV = 6,
    kCrossO = 7,
    kDecoderFc1 = 8
};

// What decoding reads of one source: each decoder layer's cross-attention keys and values, [length, d] rows, the
// heads side by side (the caller owns the memory).
struct MarianSourceCache {
    std::int64_t length = 0;
    std::vector<const float*> keys, values;  // per decoder layer
};

// A request's hypotheses' self-attention keys and values: per decoder layer [capacity, batch, heads, headDim], the
// first `length` positions filled (the caller owns the memory). Positions outermost, so what a request touches is a
// prefix of its memory whatever its capacity: a cache reused from a longer request faults on no page.
struct MarianSelfCache {
    std::int64_t batch = 0, capacity = 0, length = 0;
    std::vector<float*> keys, values;  // per decoder layer
};

// One request in a decoding step: its caches, adapter (may be null) and one id per hypothesis.
struct MarianStepGroup {
    MarianSelfCache* self = nullptr;
    const MarianSourceCache* source = nullptr;
    const Adapter* adapter = nullptr;
    const std::int64_t* ids = nullptr;
};

class MarianForward {
public:
    // `keepPanels`: W8A8 products of many rows read panels made once per weight (a second copy of those weights).
    MarianForward(MarianShape shape, MarianWeights weights, bool keepPanels);

    // The encoder over `sources` sequences whose ids are stacked (lengths[i] each, attention within each), with one
    // adapter (may be null): out [sum of lengths, d]. `hidden`, when given, receives the embeddings and each layer's
    // output. Throws Error("input") for an empty source, one longer than the positions, or an id outside the vocabulary.
    void encode(const std::int64_t* ids, const std::int64_t* lengths, std::int64_t sources, const Adapter* adapter, float* out,
                std::vector<std::vector<float>>* hidden = nullptr) const;
    // Each decoder layer's cross-attention keys and values of `rows` encoded rows: keys[l], values[l] [rows, d].
    void remember(const float* encoded, std::int64_t rows, const Adapter* adapter, float* const* keys, float* const* values) const;
    // One decoding step for `count` requests: each is fed one id per hypothesis at its cache's length, which then
    // grows by one; logits [sum of batches, vocab], the requests' rows one after another. Throws Error("input") past
    // a cache's capacity or for an id outside the vocabulary, before any cache changes.
    void step(const MarianStepGroup* groups, std::int64_t count, float* logits) const;

    // Lays out the panels of the next kept weight not laid out yet (each is otherwise made by its first product of many
    // rows): for a caller with time to spare before the first request. False once every one is made.
    bool makeNextPanels() const;

    // Whether rows of several sequences go out a part per kernel thread (kernels/row_parts.h): where the weights fit
    // the last-level cache, unless switched off for a comparison.
    bool inParts() const;

    const MarianShape& shape() const { return shape_; }
    const MarianWeights& weights() const { return weights_; }
    std::int64_t decoderLayers() const { return static_cast<std::int64_t>(weights_.decoder.size()); }

private:
    struct Scratch;
    static Scratch& threadScratch();
    // Bounds of one part per kernel thread over sequences of rows[i] rows each (kernels/row_parts.h), or none: where the
    // weights are not kept in the last-level cache, or a part would get too few rows.
    std::vector<std::int64_t> partsOf(const std::int64_t* rows, std::int64_t count) const;
    // encode(), remember() and step() on the calling thread's share (their kernels share each operation out unless
    // they run in a part).
    void encodeRows(const std::int64_t* ids, const std::int64_t* lengths, std::int64_t sources, const Adapter* adapter, float* out,
                    std::vector<std::vector<float>>* hidden) const;
    void rememberRows(const float* encoded, std::int64_t rows, const Adapter* adapter, float* const* keys, float* const* values) const;
    void stepGroups(const MarianStepGroup* groups, std::int64_t count, float* logits) const;
    void embed(const std::int64_t* ids, const std::int64_t* positions, std::int64_t count, float* x) const;
    // y [rows, out] = x W^T (scaled) + bias, plus each row's adapter delta for `slot` (adapters null: none).
    void linear(const float* x, std::int64_t rows, const BiasedMatrix& m, std::int64_t slot, const Adapter* const* adapters, float* y,
                Scratch& s) const;
    // The same x through several layers of one depth (W8A8: the rows quantized once for all).
    void linears(const float* x, std::int64_t rows, std::initializer_list<const BiasedMatrix*> ms, std::int64_t firstSlot,
                 const Adapter* const* adapters, std::initializer_list<float*> ys, Scratch& s) const;
    void activate(float* x, std::int64_t count) const;
    // x = LayerNorm(x + h), x and h [rows, d].
    void addNorm(float*& x, const float* h, const LayerNormWeights& norm, std::int64_t rows, Scratch& s) const;
    // x = LayerNorm(x + fc2(act(fc1(x)))), fc1 at adapter slot `slot` and fc2 at the next.
    void feedForward(float*& x, const BiasedMatrix& fc1, const BiasedMatrix& fc2, const LayerNormWeights& norm, std::int64_t rows,
                     std::int64_t slot, const Adapter* const* adapters, Scratch& s) const;
    void encoderLayer(std::int64_t index, float*& x, const std::int64_t* lengths, std::int64_t sources, std::int64_t rows,
                      const Adapter* const* adapters, Scratch& s) const;
    void decoderLayer(std::int64_t index, float*& x, const MarianStepGroup* groups, std::int64_t count, std::int64_t rows,
                      const Adapter* const* adapters, Scratch& s) const;

    MarianShape shape_;
    MarianWeights weights_;
    std::vector<float> positions_;           // [maxPositions, d]
    bool rowParts_ = false;                  // rows of several sequences shared out a part per thread (kernels/row_parts.h)
    std::vector<const BiasedMatrix*> kept_;  // the weights that keep panels
    mutable std::atomic<std::size_t> nextKept_{0};
};

// Sinusoids as MarianSinusoidalPositionalEmbedding: angle p / 10000^(2*(j//2)/d) in double, sin of even j in the
// first half, cos of odd j in the second, then float32. [positions, dim] row-major.
std::vector<float> marianSinusoids(std::int64_t positions, std::int64_t dim);

}  // namespace dragoman::cpu
