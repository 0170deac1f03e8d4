#include "layers/attention.h"

#include "kernels/attention.h"
#include "kernels/threads.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

namespace dragoman::attention {
namespace {

kernels::KvLayout layoutOf(const torch::Tensor& cache) {
    return {cache.data_ptr<float>(), cache.size(0) == 1 ? 0 : cache.stride(0), cache.stride(1), cache.stride(2)};
}

}  // namespace

torch::Tensor oneQuery(const torch::Tensor& queries, const torch::Tensor& keys, const torch::Tensor& values, std::int64_t heads) {
    const auto batch = queries.size(0), headDim = keys.size(3), length = keys.size(2);
    TORCH_CHECK(queries.is_contiguous() && queries.scalar_type() == torch::kFloat32 && queries.numel() == batch * heads * headDim,
                "attention::oneQuery: queries must be contiguous float32 [batch, heads * head_dim]");
    TORCH_CHECK(keys.stride(3) == 1 && values.stride(3) == 1 && keys.sizes() == values.sizes() && heads % keys.size(1) == 0 &&
                    (keys.size(0) == 1 || keys.size(0) == batch),
                "attention::oneQuery: caches must be float32 [batch or 1, kv_heads, length, head_dim] with contiguous rows");
    auto out = torch::empty({batch, heads * headDim}, torch::kFloat32);
    kernels::attendOneQuery(queries.data_ptr<float>(), layoutOf(keys), layoutOf(values), out.data_ptr<float>(), batch, heads,
                            heads / keys.size(1), length, headDim, static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim))));
    return out;
}

torch::Tensor full(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    ParallelBlas blas(q.numel() * k.size(-2));  // each of the two products (parallel for a long prompt)
    auto scores = torch::matmul(q, k.transpose(-1, -2)) * scale;
    if (mask.defined()) scores = scores + mask;
    return torch::matmul(torch::softmax(scores, -1), v);
}

torch::Tensor causalMask(std::int64_t start, std::int64_t t, std::int64_t total, const torch::Device& device) {
    const auto on = torch::TensorOptions().device(device);
    auto positions = torch::arange(start, start + t, on.dtype(torch::kInt64)).unsqueeze(1);  // [T, 1]
    auto keyPositions = torch::arange(0, total, on.dtype(torch::kInt64)).unsqueeze(0);       // [1, total]
    return torch::zeros({t, total}, on.dtype(torch::kFloat32))
        .masked_fill(keyPositions > positions, -std::numeric_limits<float>::infinity());
}

torch::Tensor splitHeads(const torch::Tensor& x, std::int64_t heads) {
    const auto batched = x.dim() == 3 ? x : x.unsqueeze(0);
    const auto b = batched.size(0), t = batched.size(1), d = batched.size(2);
    return batched.view({b, t, heads, d / heads}).transpose(1, 2);
}

torch::Tensor mergeHeads(const torch::Tensor& x) {
    const auto b = x.size(0), h = x.size(1), t = x.size(2), hd = x.size(3);
    return x.transpose(1, 2).reshape({b, t, h * hd});
}

}  // namespace dragoman::attention
