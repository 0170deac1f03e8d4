#pragma once
// Attention of one new query row per sequence against its cached keys and values: what every decoding
// step does, once per layer (self-attention over the tokens so far, cross-attention over the source).
// As libtorch ops this was ~6 calls per layer (two batched GEMMs through OpenBLAS for a 1 x T product,
// a scale, a softmax, a head merge); here it is one pass that writes the heads already merged.
#include <cstdint>

namespace dragoman::kernels {

// Where one sequence's cached rows live: row t of head h of batch entry b starts at
// data + b * batchStride + h * headStride + t * rowStride (batchStride 0: one cache shared by every entry).
struct KvLayout {
    const float* data;
    std::int64_t batchStride, headStride, rowStride;
};

// out[b, h * headDim + j] = sum_t softmax_t(scale * q[b,h] . K[b,h/group,t]) V[b,h/group,t,j], with
// q [batch, heads * headDim] and out [batch, heads * headDim] contiguous. `group` query heads share one
// key/value head (grouped-query attention; 1 for ordinary multi-head attention). Float32 throughout, the
// softmax with max subtraction as libtorch's.
void attendOneQuery(const float* q, const KvLayout& keys, const KvLayout& values, float* out, std::int64_t batch, std::int64_t heads,
                    std::int64_t group, std::int64_t length, std::int64_t headDim, float scale);

// A decoding step's new keys and values, stored into the caches at position length - 1 by the thread that attends
// with them (so the copies are shared out with the heads): row b's key heads at keys + b * stride, side by side, its
// value heads likewise. keyCache and valueCache are the request's caches, its KvLayouts' data.
struct KvAppend {
    const float* keys = nullptr;
    const float* values = nullptr;
    std::int64_t stride = 0;
    float* keyCache = nullptr;
    float* valueCache = nullptr;
};

// One request of a batched decoding step: its `rows` query rows attend over its own caches of `length` rows (with
// `append`, the last of them written first).
struct AttentionRequest {
    KvLayout keys, values;
    std::int64_t rows, length;
    KvAppend append = {};
};

// attendOneQuery for several requests at once, their query and output rows one after another: the numbers of
// attendOneQuery per request, in one call instead of one (and its tensors) per request.
void attendOneQueryEach(const float* q, const AttentionRequest* requests, std::int64_t count, float* out, std::int64_t heads,
                        std::int64_t group, std::int64_t headDim, float scale);

}  // namespace dragoman::kernels
