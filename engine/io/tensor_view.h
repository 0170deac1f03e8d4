#pragma once
// Turns a tensor of a mapped safetensors file into a torch::Tensor that points into the mapping.
// The tensor's deleter holds the file, so the mapping outlives every tensor made from it.
// Data that is misaligned for its dtype is the one case that is copied; copies are counted.
#include "io/safetensors.h"

#include <torch/types.h>

#include <atomic>
#include <cstdint>
#include <optional>

namespace dragoman {

struct CopyCounter {
    std::atomic<std::uint64_t> tensors{0};
    std::atomic<std::uint64_t> bytes{0};
};

// The torch type a tensor is bound as: the float8 types as their bytes (kUInt8: torch 1.13 has no float8;
// layers/linear.h reads them), none for the types no model computes with (U16-U64, F6, F4).
std::optional<c10::ScalarType> torchType(DType dtype);

// Zero-copy when the data is aligned for its element size; otherwise copied (and counted in `copies`). Throws
// Error("unsupported") for a dtype without a torch type.
torch::Tensor mappedTensor(const std::shared_ptr<const SafetensorsFile>& file, const TensorInfo& info, CopyCounter* copies = nullptr);

}  // namespace dragoman
