#pragma once
// HunYuanDenseV1 (HY-MT1.5, Hy-MT2 dense) on the CPU kernels over raw buffers, without libtorch: the numbers of
// transformers' HunYuanDenseV1ForCausalLM (models/hunyuan.h says which), with the weights as mapped (cpu/matrix.h),
// each sequence's keys and values in a KvCache the caller owns, and the activations in per-thread scratch that is
// reused from call to call (fresh buffers were pages the kernel zeroed on every layer). HunyuanModel runs its CPU
// path here; a program that never initialises libtorch can too.
//
// Per layer, as transformers: RMSNorm, q/k/v projections, RoPE (rotate-half, base rope_theta * alpha^(d / (d - 2))),
// per-head RMSNorm of q and k after RoPE, grouped-query attention, output projection, residual; RMSNorm, SiLU-gated
// MLP, residual. A batched step gives each row the numbers of its step alone (the kernels' sums do not depend on the
// other rows), which decode/batch_search.h relies on.
#include "cpu/adapter_deltas.h"
#include "cpu/matrix.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace dragoman::cpu {

// An RMSNorm's weight: float32 or bf16, `dim` values.
struct NormWeight {
    const void* data = nullptr;
    Dtype type = Dtype::F32;
};

struct HunyuanShape {
    std::int64_t hidden = 0, intermediate = 0, heads = 0, kvHeads = 0, headDim = 0, vocab = 0, maxPositions = 0;
    double rmsEps = 1e-5, ropeBase = 10000.0;
    bool qkNorm = true;
    bool bf16Activations = false;  // a bf16 model's products may round their rows to bf16 (cpu/projection.h)
};

struct HunyuanLayerWeights {
    NormWeight inputNorm, qNorm, kNorm, postNorm;
    Matrix q, k, v, o, gate, up, down;
};

struct HunyuanWeights {
    Matrix embeddings;  // [vocab, hidden]; 8-bit tables with their row (or tensor) scales
    NormWeight finalNorm;
    Matrix output;  // [vocab, hidden]: the embeddings where they are tied
    std::vector<HunyuanLayerWeights> layers;
};

// One sequence's keys and values: per layer [kvHeads, capacity, headDim] float32, positions [0, length) filled.
struct KvCache {
    std::vector<float*> keys, values;
    std::int64_t capacity = 0, length = 0;
};

class HunyuanForward {
public:
    HunyuanForward(HunyuanShape shape, HunyuanWeights weights);

    // Feeds `count` ids after what `cache` holds and advances it. logits: [vocab] for the last position, or
    // [count, vocab] with `allPositions`. `hidden`, when given, receives the embeddings, each layer's output and the
    // final norm, each [count, hidden]. `interrupted` is asked between layers (a long prompt takes seconds): true
    // throws Cancelled. Throws Error("input") past the cache's capacity or for an id outside the vocabulary.
    void prompt(KvCache& cache, const std::int64_t* ids, std::int64_t count, const Adapter* adapter, float* logits, bool allPositions,
                const std::function<bool()>& interrupted = {}, std::vector<std::vector<float>>* hidden = nullptr) const;

    // One decoding step for `rows` sequences: caches[i] is fed ids[i] with adapters[i] (may be null); logits
    // [rows, vocab], row i what prompt() gives that sequence alone.
    void step(KvCache* const* caches, const std::int64_t* ids, const Adapter* const* adapters, std::int64_t rows, float* logits) const;

    const HunyuanShape& shape() const { return shape_; }
    const std::vector<float>& inverseFrequencies() const { return inverseFrequencies_; }  // RoPE's, [headDim / 2]
    std::int64_t layers() const { return static_cast<std::int64_t>(weights_.layers.size()); }

private:
    struct Scratch;
    static Scratch& threadScratch();  // each thread's activations, reused from call to call
    void embed(const std::int64_t* ids, std::int64_t count, float* x) const;
    void linear(const float* x, std::int64_t rows, const Matrix& w, std::int64_t slot, const Adapter* const* adapters, float* y,
                Scratch& s) const;
    void layer(std::int64_t index, KvCache* const* caches, const Adapter* const* adapters, std::int64_t rows, bool oneSequence, float* x,
               Scratch& s) const;
    // RoPE on `count` rows of `heads` heads, row i at the position whose cos and sin tables the scratch holds.
    void rotate(float* rows, std::int64_t heads, std::int64_t count, const Scratch& s) const;
    void head(const float* x, std::int64_t rows, float* logits, Scratch& s) const;

    HunyuanShape shape_;
    HunyuanWeights weights_;
    std::vector<float> inverseFrequencies_;  // [headDim / 2]
};

}  // namespace dragoman::cpu
