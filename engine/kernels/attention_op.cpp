#include "kernels/attention.h"
#include "models/ops.h"

#include <cmath>

namespace dragoman::ops {
namespace {

kernels::KvLayout layoutOf(const torch::Tensor& cache) {
    return {cache.data_ptr<float>(), cache.size(0) == 1 ? 0 : cache.stride(0), cache.stride(1), cache.stride(2)};
}

}  // namespace

torch::Tensor attendOneQuery(const torch::Tensor& queries, const torch::Tensor& keys, const torch::Tensor& values, std::int64_t heads) {
    const auto batch = queries.size(0), headDim = keys.size(3), length = keys.size(2);
    TORCH_CHECK(queries.is_contiguous() && queries.scalar_type() == torch::kFloat32 && queries.numel() == batch * heads * headDim,
                "attendOneQuery: queries must be contiguous float32 [batch, heads * head_dim]");
    TORCH_CHECK(keys.stride(3) == 1 && values.stride(3) == 1 && keys.sizes() == values.sizes() && heads % keys.size(1) == 0 &&
                    (keys.size(0) == 1 || keys.size(0) == batch),
                "attendOneQuery: caches must be float32 [batch or 1, kv_heads, length, head_dim] with contiguous rows");
    auto out = torch::empty({batch, heads * headDim}, torch::kFloat32);
    kernels::attendOneQuery(queries.data_ptr<float>(), layoutOf(keys), layoutOf(values), out.data_ptr<float>(), batch, heads,
                            heads / keys.size(1), length, headDim, static_cast<float>(1.0 / std::sqrt(static_cast<double>(headDim))));
    return out;
}

}  // namespace dragoman::ops
