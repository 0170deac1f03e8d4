#pragma once
// A request's LoRA adapter as the CPU forward passes read it, applied unmerged: y += scale * B (A x) on the rows that
// run with it, two thin products per layer, never the merged matrix. Rows of several adapters in one batched step
// each get their own adapter's delta.
#include "cpu/matrix.h"

#include <cstdint>
#include <vector>

namespace dragoman::cpu {

// A LoRA delta: A [r, in] and B [out, r] as the adapter file stores them.
struct LowRank {
    Matrix a, b;
    double scale = 1.0;
};

// A request's adapter: the delta for each of the model's linear layers by slot (the model's linears() order), null
// where it has none.
class Adapter {
public:
    virtual ~Adapter() = default;
    virtual const LowRank* at(std::int64_t slot) const = 0;
};

// Buffers the deltas are computed in, reused from call to call.
struct DeltaScratch {
    std::vector<float> lowRank, delta, gathered;
};

// y [rows, out] += each row's adapter delta for `slot`: adapters[i] for row i of x [rows, in] (adapters null: none).
// The addition is libtorch's add_(delta, alpha): one fused multiply-add per value.
void addAdapterDeltas(const float* x, std::int64_t rows, std::int64_t in, std::int64_t out, std::int64_t slot,
                      const Adapter* const* adapters, float* y, DeltaScratch& s);

}  // namespace dragoman::cpu
