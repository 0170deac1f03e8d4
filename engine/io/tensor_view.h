#pragma once
// Turns a tensor of a mapped safetensors file into a torch::Tensor that points into the mapping.
// The tensor's deleter holds the file, so the mapping outlives every tensor made from it.
// Data that is misaligned for its dtype is the one case that is copied; copies are counted.
#include "io/safetensors.h"

#include <torch/types.h>

#include <atomic>
#include <cstdint>

namespace dragoman {

struct CopyCounter {
    std::atomic<std::uint64_t> tensors{0};
    std::atomic<std::uint64_t> bytes{0};
};

c10::ScalarType torchType(DType dtype);

// Zero-copy when the data is aligned for its element size; otherwise copied (and counted in `copies`).
torch::Tensor mappedTensor(const std::shared_ptr<const SafetensorsFile>& file, const TensorInfo& info, CopyCounter* copies = nullptr);

}  // namespace dragoman
