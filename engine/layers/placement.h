#pragma once
// Where a model's arithmetic runs. On the CPU the engine's own kernels read the weights as mapped (no copy,
// bf16 widened in registers, float32 accumulation). On a CUDA device the weights are copied to device memory
// once, at build time, in the checkpoint's dtype, and every product is libtorch's own float32 op (bf16
// weights widened per call), so both paths match the reference within 1e-4. `libtorchOps` also selects
// that second path on the CPU, so it is tested where no GPU is. `bf16Activations` marks a model that computes in
// bf16 (its config.json's torch_dtype): on CPUs with AVX512-BF16 and no AMX its products (prompts and decoding steps)
// may round activations to bf16 (kernels/bf16_dot_gemm.h); float32 models keep float32 activations everywhere.
#include <torch/types.h>

namespace dragoman {

struct Placement {
    torch::Device device = torch::kCPU;
    bool libtorchOps = false;  // always true off the CPU
    bool bf16Activations = false;

    bool onCpuKernels() const { return device.is_cpu() && !libtorchOps; }
};

}  // namespace dragoman
