#pragma once
// The device a model that supports it runs on: CUDA when the linked libtorch has a CUDA device, otherwise
// the CPU. DRAGOMAN_DEVICE=cpu keeps the CPU; DRAGOMAN_DEVICE=cuda insists (an error without a device).
#include "models/placement.h"

#include <string>

namespace dragoman {

// Throws Error("config") for an unknown DRAGOMAN_DEVICE value or "cuda" without a CUDA device.
Placement choosePlacement();

// For the status line: "CPU", "CUDA:0", with why CUDA is not used where that helps ("CPU
// (DRAGOMAN_DEVICE=cpu)").
std::string describePlacement(const Placement& placement);

}  // namespace dragoman
