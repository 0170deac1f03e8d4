#pragma once
// A token embedding table as mapped: rows are looked up and widened to float32 (bf16 tables stay bf16).
// The same table can serve as a tied output layer (Embedding::weight()).
#include "layers/placement.h"
#include "layers/weights.h"

#include <torch/types.h>

#include <string>

namespace dragoman {

class Embedding {
public:
    Embedding() = default;
    Embedding(WeightBinder& weights, const std::string& name, std::int64_t vocab, std::int64_t dim, Placement placement = {});

    // ids [...] int64 -> [..., dim] float32, times `scale`.
    torch::Tensor operator()(const torch::Tensor& ids, double scale = 1.0) const;
    const torch::Tensor& weight() const { return weight_; }
    std::int64_t vocabSize() const { return weight_.defined() ? weight_.size(0) : 0; }
    void place(Placement placement);

private:
    torch::Tensor weight_;
    Placement placement_;
};

}  // namespace dragoman
