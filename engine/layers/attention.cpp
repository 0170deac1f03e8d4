#include "layers/attention.h"

#include "kernels/attention.h"
#include "kernels/causal_attention.h"
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

torch::Tensor oneQueryEach(const torch::Tensor& queries, const std::vector<CacheView>& caches, std::int64_t heads) {
    TORCH_CHECK(!caches.empty() && queries.is_contiguous() && queries.scalar_type() == torch::kFloat32,
                "attention::oneQueryEach: queries must be contiguous float32 [rows, heads * head_dim]");
    const auto& first = *caches.front().keys;
    const auto kvHeads = first.size(1), headDim = first.size(3);
    std::vector<kernels::AttentionRequest> requests;
    std::int64_t rows = 0;
    for (const auto& c : caches) {
        TORCH_CHECK(c.keys->stride(3) == 1 && c.values->stride(3) == 1 && c.keys->sizes() == c.values->sizes() &&
                        c.keys->size(1) == kvHeads && c.keys->size(3) == headDim && (c.keys->size(0) == c.rows || c.keys->size(0) == 1) &&
                        c.length <= c.keys->size(2),
                    "attention::oneQueryEach: caches must be float32 [rows or 1, kv_heads, capacity, head_dim] with contiguous rows");
        requests.push_back({layoutOf(*c.keys), layoutOf(*c.values), c.rows, c.length});
        rows += c.rows;
    }
    TORCH_CHECK(queries.numel() == rows * heads * headDim && heads % kvHeads == 0, "attention::oneQueryEach: one query row per cache row");
    auto out = torch::empty({rows, heads * headDim}, torch::kFloat32);
    kernels::attendOneQueryEach(queries.data_ptr<float>(), requests.data(), static_cast<std::int64_t>(requests.size()),
                                out.data_ptr<float>(), heads, heads / kvHeads, headDim,
                                static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim))));
    return out;
}

torch::Tensor withinEach(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const std::vector<std::int64_t>& lengths,
                         std::int64_t heads) {
    const auto queries = q.contiguous(), keys = k.contiguous(), values = v.contiguous();
    const auto width = queries.size(1), headDim = width / heads;
    TORCH_CHECK(queries.dim() == 2 && queries.scalar_type() == torch::kFloat32 && keys.sizes() == queries.sizes() &&
                    values.sizes() == queries.sizes() && width % heads == 0,
                "attention::withinEach: q, k and v must be float32 [rows, heads * head_dim]");
    auto out = torch::empty_like(queries);
    const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim)));
    std::vector<kernels::AttentionRequest> run;  // consecutive short sequences, one kernel call
    std::int64_t runStart = 0, offset = 0;
    const auto flush = [&] {
        if (run.empty()) return;
        kernels::attendOneQueryEach(queries.data_ptr<float>() + runStart * width, run.data(), static_cast<std::int64_t>(run.size()),
                                    out.data_ptr<float>() + runStart * width, heads, 1, headDim, scale);
        run.clear();
    };
    for (const auto length : lengths) {
        if (length <= kKernelRows) {
            if (run.empty()) runStart = offset;
            // Every query row of the sequence reads the same keys and values (batch stride 0).
            run.push_back({{keys.data_ptr<float>() + offset * width, 0, headDim, width},
                           {values.data_ptr<float>() + offset * width, 0, headDim, width},
                           length,
                           length});
        } else if (kernels::causalAttentionKernel(headDim)) {
            flush();
            kernels::attendAll({queries.data_ptr<float>() + offset * width, headDim, width},
                               {keys.data_ptr<float>() + offset * width, 0, headDim, width},
                               {values.data_ptr<float>() + offset * width, 0, headDim, width}, out.data_ptr<float>() + offset * width,
                               length, heads, 1, headDim, scale);
        } else {
            flush();
            const auto rows = [&](const torch::Tensor& t) { return splitHeads(t.narrow(0, offset, length), heads); };
            out.narrow(0, offset, length).copy_(mergeHeads(full(rows(queries), rows(keys), rows(values), {})).squeeze(0));
        }
        offset += length;
    }
    flush();
    TORCH_CHECK(offset == queries.size(0), "attention::withinEach: the lengths must add up to the rows");
    return out;
}

torch::Tensor full(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v, const torch::Tensor& mask) {
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    ParallelBlas blas(q.numel() * k.size(-2));  // each of the two products (parallel for a long prompt)
    auto scores = torch::matmul(q, k.transpose(-1, -2)) * scale;
    if (mask.defined()) scores = scores + mask;
    return torch::matmul(torch::softmax(scores, -1), v);
}

torch::Tensor causalPrompt(const torch::Tensor& queries, const torch::Tensor& keys, const torch::Tensor& values, std::int64_t start,
                           bool engineKernels) {
    const auto heads = queries.size(0), t = queries.size(1), headDim = queries.size(2), kvHeads = keys.size(0), total = keys.size(1);
    TORCH_CHECK(total == start + t && heads % kvHeads == 0, "attention::causalPrompt: the cache must hold the prompt's rows after start");
    const auto group = heads / kvHeads;
    if (engineKernels && queries.is_cpu() && queries.scalar_type() == torch::kFloat32 && keys.scalar_type() == torch::kFloat32 &&
        values.scalar_type() == torch::kFloat32 && keys.stride(2) == 1 && values.stride(2) == 1 &&
        kernels::causalAttentionKernel(headDim)) {
        const auto q = queries.contiguous();
        auto out = torch::empty({t, heads * headDim}, torch::kFloat32);
        kernels::attendCausal({q.data_ptr<float>(), q.stride(0), q.stride(1)}, layoutOf(keys.unsqueeze(0)), layoutOf(values.unsqueeze(0)),
                              out.data_ptr<float>(), t, start, heads, group, headDim,
                              static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim))));
        return out;
    }
    // Query heads sharing a key/value head are stacked so one batched product serves the whole group.
    const auto grouped = queries.reshape({kvHeads, group * t, headDim});
    torch::Tensor mask;  // a single row sees every key
    if (t > 1) mask = causalMask(start, t, total, queries.device()).repeat({group, 1});
    return full(grouped, keys, values, mask).view({heads, t, headDim}).transpose(0, 1).reshape({t, heads * headDim});
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
