#pragma once
// Where a model's arithmetic runs. On the CPU the engine's own kernels read the weights as mapped (no copy,
// bf16 widened in registers, float32 accumulation). On a CUDA device the weights are copied to device memory
// once, at build time, in the checkpoint's dtype, and every product is libtorch's own float32 op (bf16
// weights widened per call), so both paths match the reference within 1e-4. `libtorchOps` also selects
// that second path on the CPU, so it is tested where no GPU is.
#include <torch/types.h>

namespace dragoman {

struct Placement {
    torch::Device device = torch::kCPU;
    bool libtorchOps = false;  // always true off the CPU

    bool onCpuKernels() const { return device.is_cpu() && !libtorchOps; }
};

}  // namespace dragoman
