#pragma once
// Turns a tensor of a mapped safetensors file into a torch::Tensor that points into the mapping.
// The tensor's deleter holds the file, so the mapping outlives every tensor made from it.
// Data that is misaligned for its dtype is the one case that is copied; copies are counted.
#include "io/checkpoint.h"
#include "io/safetensors.h"

#include <torch/types.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace dragoman {

// The torch type a tensor is bound as: the float8 types as their bytes (kUInt8: torch 1.13 has no float8;
// layers/linear.h reads them), none for the types no model computes with (U16-U64, F6, F4).
std::optional<c10::ScalarType> torchType(DType dtype);

// Zero-copy when the data is aligned for its element size; otherwise copied (and counted in `copies`). Throws
// Error("unsupported") for a dtype without a torch type.
torch::Tensor mappedTensor(const std::shared_ptr<const SafetensorsFile>& file, const TensorInfo& info, CopyCounter* copies = nullptr);

// Every tensor of a checkpoint as mappedTensor() binds it, by name: what the libtorch networks are built from.
std::map<std::string, torch::Tensor, std::less<>> tensorsOf(const Checkpoint& checkpoint, CopyCounter* copies = nullptr);

}  // namespace dragoman
