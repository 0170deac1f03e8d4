#pragma once
// Attention of a prompt's new rows over a decoder's cache, each row seeing the keys up to its own position, in one
// pass on AVX-512 CPUs. As libtorch operations (attention::full with a causal mask) a 500-token prompt of HY-MT 1.8B
// spent a fifth of its time here: two batched products over every key, the masked half included, and five passes
// over a [heads, T, T] score tensor that does not fit in L2 (scale, mask, softmax's max, exponentials, division).
// Here each group of query rows computes the scores of the keys it may see, in cache, with the keys transposed once
// per call so that sixteen keys' scores are one vector.
//
// Semantics: float32 throughout; each row's softmax subtracts its maximum as libtorch's does; the exponential is a
// degree-6 polynomial on the reduced argument (within 2 ulp of expf). A row's numbers do not depend on the other rows.
#include "kernels/attention.h"

#include <cstdint>

namespace dragoman::kernels {

// Whether attendCausal and attendAll run here: AVX-512 and a head dimension that is a multiple of 16.
bool causalAttentionKernel(std::int64_t headDim);

// Where a prompt's query rows live: row i of head h starts at data + h * headStride + i * rowStride.
struct QueryLayout {
    const float* data;
    std::int64_t headStride, rowStride;
};

// out[i, h * headDim + j] = sum over t <= start + i of softmax_t(scale * q[i,h] . K[h/group, t]) V[h/group, t, j], for
// the `rows` new rows i (positions start..start+rows-1) whose keys and values are already in the cache (the layouts'
// batch strides are not used). out is [rows, heads * headDim], contiguous.
void attendCausal(const QueryLayout& q, const KvLayout& keys, const KvLayout& values, float* out, std::int64_t rows, std::int64_t start,
                  std::int64_t heads, std::int64_t group, std::int64_t headDim, float scale);

// The same without the mask, for an encoder's sequence: every one of the `rows` rows sees all `rows` keys and values
// (out[i] as above with t over 0..rows-1). As libtorch operations a long source's attention took two batched products
// and five passes over a [heads, T, T] score tensor.
void attendAll(const QueryLayout& q, const KvLayout& keys, const KvLayout& values, float* out, std::int64_t rows, std::int64_t heads,
               std::int64_t group, std::int64_t headDim, float scale);

}  // namespace dragoman::kernels
