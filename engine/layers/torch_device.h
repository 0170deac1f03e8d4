#pragma once
// A Placement's device as libtorch names it, for the layers that copy their tensors there.
#include "layers/placement.h"

#include <torch/types.h>

namespace dragoman {

inline torch::Device torchDevice(const Placement& placement) {
    return placement.onCpu() ? torch::Device(torch::kCPU) : torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(placement.cudaIndex));
}

}  // namespace dragoman
