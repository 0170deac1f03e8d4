#pragma once
// A token embedding table as mapped: rows are looked up and widened to float32 (bf16 tables stay bf16).
// The same table can serve as a tied output layer (Embedding::weight() and scale()). An 8-bit table (I8 or
// F8_E4M3 bound as bytes) comes with `<name>_scale` per row ([vocab, 1]) or per table ([1] or []), the layout
// compressed-tensors uses for quantized Linear weights; a looked-up row is its codes times its scale.
#include "layers/placement.h"
#include "layers/weights.h"
#include "models/vocabulary_table.h"

#include <torch/types.h>

#include <string>
#include <vector>

namespace dragoman {

class Embedding {
public:
    Embedding() = default;
    Embedding(WeightBinder& weights, const std::string& name, std::int64_t vocab, std::int64_t dim, Placement placement = {});

    // ids [...] int64 -> [..., dim] float32, times `scale`.
    torch::Tensor operator()(const torch::Tensor& ids, double scale = 1.0) const;
    const torch::Tensor& weight() const { return weight_; }
    // The 8-bit table's scales as float32 [vocab] or [1] (a tied output layer's per-channel scales); undefined
    // for a floating-point table.
    const torch::Tensor& scale() const { return scale_; }
    // The scale as the checkpoint stores it (for comparing a stored alias of the table).
    const torch::Tensor& storedScale() const { return storedScale_; }
    std::int64_t vocabSize() const { return weight_.defined() ? weight_.size(0) : 0; }
    void place(Placement placement);

private:
    torch::Tensor weight_, scale_, storedScale_;
    Placement placement_;
};

}  // namespace dragoman
