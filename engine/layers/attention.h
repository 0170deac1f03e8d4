#pragma once
// Scaled dot-product attention as tensor operations shared by the architectures: a decoding step's one
// query row per sequence over its cached keys and values (one pass of kernels/attention.h), and full
// attention of a prompt or a training batch with an additive mask.
#include <torch/types.h>

namespace dragoman::attention {

// queries: contiguous float32 [batch, heads * head_dim]; keys, values: [batch or 1 (shared), kv_heads,
// length, head_dim] views with contiguous rows. Returns [batch, heads * head_dim], the heads merged.
torch::Tensor oneQuery(const torch::Tensor& queries, const torch::Tensor& keys, const torch::Tensor& values, std::int64_t heads);

// softmax(q k^T / sqrt(head_dim) + mask) v over the last two dimensions; `mask` (optional) is 0 where a
// position may be seen and -inf where not.
torch::Tensor full(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask = {});

// Additive mask [T, total] for T new positions starting at `start` over `total` cached ones: position i sees
// keys 0..start+i.
torch::Tensor causalMask(std::int64_t start, std::int64_t t, std::int64_t total, const torch::Device& device = torch::kCPU);

// [T, d] or [B, T, d] -> [B, H, T, d / H], and back.
torch::Tensor splitHeads(const torch::Tensor& x, std::int64_t heads);
torch::Tensor mergeHeads(const torch::Tensor& x);

}  // namespace dragoman::attention
