#pragma once
// `bench kernels`: the W8A8 products and decoding attention alone, side by side in one process, against the CPU's
// own peak. Whole-process timings on these VMs move with the minute; a kernel's rounds here alternate with its
// baseline's, so their ratio is read from neighbouring rounds.
//
// Products (int8 weights, activations quantized per row): the one-row kernel (panels switched off), panels laid out per
// call, and panels kept (what a small model's layers do), each in GMAC/s and as a share of `vpdpbusd`'s peak on every
// kernel thread. Attention: one decoding step's attention for 16 requests of 6 heads of 64, in ns per key and head.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <vector>

namespace dragoman::bench {

struct KernelShape {
    std::int64_t m, n, k;  // rows, outputs, depth
};

struct KernelsBenchOptions {
    std::vector<KernelShape> shapes{{1, 1536, 384}, {16, 1536, 384}, {16, 16004, 384}, {190, 1536, 384}, {500, 4096, 2048}};
    std::vector<std::int64_t> keys{16, 40, 200};  // cached rows the attention reads
    int rounds = 5;
};

nlohmann::ordered_json benchKernels(const KernelsBenchOptions& options);

}  // namespace dragoman::bench
