#pragma once
// Where a model's arithmetic runs. On the CPU the engine's own kernels read the weights as mapped (no copy,
// bf16 widened in registers, float32 accumulation). On a CUDA device the weights are copied to device memory
// once, at build time, in the checkpoint's dtype, and every product is libtorch's own float32 op (bf16
// weights widened per call), so both paths match the reference within 1e-4. `libtorchOps` also selects
// that second path on the CPU, so it is tested where no GPU is. `bf16Activations` marks a model that computes in
// bf16 (its config.json's torch_dtype): on CPUs with AVX512-BF16 and no AMX its products (prompts and decoding steps)
// may round activations to bf16 (kernels/bf16_dot_gemm.h); float32 models keep float32 activations everywhere.
// No libtorch here: layers/torch_device.h gives the libtorch device.
namespace dragoman {

struct Placement {
    enum class Device { Cpu, Cuda };
    Device device = Device::Cpu;
    int cudaIndex = 0;         // which CUDA device
    bool libtorchOps = false;  // always true off the CPU
    bool bf16Activations = false;
    // int8 weights whose activations are quantized per token (W8A8, as its quantization_config declares), on both
    // paths: the CPU kernels' integer products (kernels/int8_activation_gemm.h), libtorch's on fake-quantized rows.
    bool int8Activations = false;

    static Placement cuda(int index) { return {Device::Cuda, index, true, false, false}; }
    bool onCpu() const { return device == Device::Cpu; }
    bool onCpuKernels() const { return onCpu() && !libtorchOps; }
};

}  // namespace dragoman
