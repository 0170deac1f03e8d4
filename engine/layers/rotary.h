#pragma once
// Rotary position embedding in the rotate-half (NeoX) layout with transformers' inverse frequencies
// 1 / base^(arange(0, head_dim, 2) / head_dim), computed in float32.
#include "layers/placement.h"

#include <torch/types.h>

#include <vector>

namespace dragoman {

class Rotary {
public:
    Rotary() = default;
    Rotary(std::int64_t headDim, double base, Placement placement = {});

    struct Angles {
        torch::Tensor cos, sin;  // [T, head_dim]
    };
    // The angles of positions [start, start + count).
    Angles at(std::int64_t start, std::int64_t count) const;
    // x [heads, T, head_dim] (a view of a fresh projection) rotated: in place on the CPU kernels.
    torch::Tensor operator()(const torch::Tensor& x, const Angles& angles) const;
    // x [rows, heads * head_dim] (a fresh float32 projection, contiguous, on the CPU kernels), row b rotated in place
    // by angles[b] (one position each): a batched decoding step's sequences at their own positions. Returns x.
    torch::Tensor eachRow(const torch::Tensor& x, std::int64_t heads, const std::vector<Angles>& angles) const;
    const torch::Tensor& inverseFrequencies() const { return invFreq_; }
    void place(Placement placement);

private:
    torch::Tensor invFreq_;
    Placement placement_;
};

}  // namespace dragoman
