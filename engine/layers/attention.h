#pragma once
// Scaled dot-product attention as tensor operations shared by the architectures: a decoding step's one
// query row per sequence over its cached keys and values (one pass of kernels/attention.h), and full
// attention of a prompt or a training batch with an additive mask.
#include <torch/types.h>

#include <vector>

namespace dragoman::attention {

// queries: contiguous float32 [batch, heads * head_dim]; keys, values: [batch or 1 (shared), kv_heads,
// length, head_dim] views with contiguous rows. Returns [batch, heads * head_dim], the heads merged.
torch::Tensor oneQuery(const torch::Tensor& queries, const torch::Tensor& keys, const torch::Tensor& values, std::int64_t heads);

// One request's caches in a batched step: its first `length` rows of keys and values ([rows or 1 (shared),
// kv_heads, capacity, head_dim], contiguous rows), for its `rows` query rows.
struct CacheView {
    const torch::Tensor* keys;
    const torch::Tensor* values;
    std::int64_t rows, length;
};
// oneQuery for several requests in one call: the queries' rows are the requests' rows one after another, and so
// are the result's. Each request's rows equal oneQuery over its caches.
torch::Tensor oneQueryEach(const torch::Tensor& queries, const std::vector<CacheView>& caches, std::int64_t heads);

// Unmasked self-attention within each of several sequences whose rows are stacked: q, k, v [N, heads * head_dim]
// (the lengths add up to N); returns [N, heads * head_dim], the heads merged. A sequence's rows get the same
// numbers whatever sequences come with it: up to kKernelRows rows it goes through the decoding kernel (one call
// for a run of such sequences, where libtorch took ten calls each), longer ones through the prompt kernel without its
// mask (kernels/causal_attention.h) where it runs, else libtorch's products.
constexpr std::int64_t kKernelRows = 64;
torch::Tensor withinEach(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const std::vector<std::int64_t>& lengths,
                         std::int64_t heads);

// softmax(q k^T / sqrt(head_dim) + mask) v over the last two dimensions; `mask` (optional) is 0 where a
// position may be seen and -inf where not.
torch::Tensor full(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask = {});

// A prompt's T new rows, queries [heads, T, head_dim], over a cache's first start + T rows (keys, values [kv_heads,
// length, head_dim] views with contiguous rows, the prompt's own rows written), each row seeing the keys up to its
// position: [T, heads * head_dim]. With `engineKernels` (Placement::onCpuKernels()), float32 on an AVX-512 CPU, in one
// pass (kernels/causal_attention.h); otherwise full() with a causal mask, as a CUDA device runs it.
torch::Tensor causalPrompt(const torch::Tensor& queries, const torch::Tensor& keys, const torch::Tensor& values, std::int64_t start,
                           bool engineKernels);

// Additive mask [T, total] for T new positions starting at `start` over `total` cached ones: position i sees
// keys 0..start+i.
torch::Tensor causalMask(std::int64_t start, std::int64_t t, std::int64_t total, const torch::Device& device = torch::kCPU);

// [T, d] or [B, T, d] -> [B, H, T, d / H], and back.
torch::Tensor splitHeads(const torch::Tensor& x, std::int64_t heads);
torch::Tensor mergeHeads(const torch::Tensor& x);

}  // namespace dragoman::attention
