#pragma once
// The device a model that supports it runs on: "auto" is CUDA when the linked libtorch has a CUDA device,
// otherwise the CPU; "cpu" keeps the CPU; "cuda" insists (an error without a device). Where libtorch was built
// without CUDA, none of this loads it (runtime/torch_backend.h).
#include "layers/placement.h"

#include <string>

namespace dragoman {

// Throws Error("config") for an unknown value or "cuda" without a CUDA device.
Placement choosePlacement(const std::string& requested = "auto");

// $DRAGOMAN_DEVICE when set (the environment overrides a device asked for in parameters), else `requested`.
std::string deviceOverride(const std::string& requested);

// For the status line: "CPU", "CUDA:0", with why CUDA is not used where that helps ("CPU
// (DRAGOMAN_DEVICE=cpu)").
std::string describePlacement(const Placement& placement);

}  // namespace dragoman
