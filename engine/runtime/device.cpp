#include "runtime/device.h"

#include "util/error.h"

#include <torch/cuda.h>

#include <algorithm>
#include <cstdlib>

namespace dragoman {
namespace {

std::string requested() {
    const char* value = std::getenv("DRAGOMAN_DEVICE");
    return value ? value : "";
}

}  // namespace

Placement choosePlacement() {
    const auto wanted = requested();
    if (wanted.empty() || wanted == "auto") {
        if (torch::cuda::is_available()) return {torch::Device(torch::kCUDA, 0), true};
        return {};
    }
    if (wanted == "cpu") return {};
    if (wanted == "cuda") {
        if (!torch::cuda::is_available())
            throw Error("config",
                        "DRAGOMAN_DEVICE=cuda, but the linked libtorch has no CUDA device "
                        "(it was built without CUDA, or no GPU is visible); unset it to run on the CPU");
        return {torch::Device(torch::kCUDA, 0), true};
    }
    throw Error("config", "DRAGOMAN_DEVICE='" + wanted + "' is not one of auto, cpu, cuda");
}

std::string describePlacement(const Placement& placement) {
    if (placement.device.is_cuda()) return "CUDA:" + std::to_string(std::max<int>(0, placement.device.index()));
    if (!placement.device.is_cpu()) return placement.device.str();
    if (placement.libtorchOps) return "CPU (libtorch ops)";
    if (torch::cuda::is_available()) return "CPU (DRAGOMAN_DEVICE=cpu)";
    return "CPU";
}

}  // namespace dragoman
