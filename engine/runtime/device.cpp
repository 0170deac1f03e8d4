#include "runtime/device.h"

#include "runtime/torch_backend.h"
#include "util/error.h"
#include "util/overrides.h"

#include <algorithm>
#include <cstdlib>

namespace dragoman {

Placement choosePlacement(const std::string& wanted) {
    if (wanted.empty() || wanted == "auto") {
        if (cudaDeviceAvailable()) return Placement::cuda(0);
        return {};
    }
    if (wanted == "cpu") return {};
    if (wanted == "libtorch") {
        Placement placement;
        placement.libtorchOps = true;
        return placement;
    }
    if (wanted == "cuda") {
        if (!cudaDeviceAvailable())
            throw Error("config",
                        "the device is set to cuda, but the linked libtorch has no CUDA device "
                        "(it was built without CUDA, or no GPU is visible); choose auto or cpu to run on the CPU");
        return Placement::cuda(0);
    }
    throw Error("config", "device '" + wanted + "' is not one of auto, cpu, cuda, libtorch");
}

std::string deviceOverride(const std::string& requested) {
    const auto& device = environmentOverrides().device;
    return device.empty() ? requested : device;
}

std::string describePlacement(const Placement& placement) {
    if (!placement.onCpu()) return "CUDA:" + std::to_string(std::max(0, placement.cudaIndex));
    if (placement.libtorchOps) return "CPU (libtorch ops)";
    if (cudaDeviceAvailable()) return "CPU (device set to cpu)";
    return "CPU";
}

}  // namespace dragoman
