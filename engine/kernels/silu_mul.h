#pragma once
// A SiLU-gated MLP's middle: out[i] = silu(gate[i]) * up[i] with silu(g) = g / (1 + e^-g), in float32, over `count`
// values (out may alias gate or up). On AVX-512 the exponential is exp16's (within 2 ulp of expf, simd512.h); elsewhere
// std::exp. One pass instead of libtorch's silu and a multiply (two ATen calls and a tensor per layer and step).
#include <cstdint>

namespace dragoman::kernels {

void siluMul(const float* gate, const float* up, float* out, std::int64_t count);

}  // namespace dragoman::kernels
