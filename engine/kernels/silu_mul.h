#pragma once
// A SiLU-gated MLP's middle: out[i] = silu(gate[i]) * up[i] with silu(g) = g / (1 + e^-g), in float32, over `count`
// values (out may alias gate or up). On AVX-512 the exponential is exp16's (within 2 ulp of expf, simd512.h); elsewhere
// std::exp. One pass instead of libtorch's silu and a multiply (two ATen calls and a tensor per layer and step).
// Also the plain activations of a feed-forward block (Marian's fc1): silu alone, and gelu. Every value is computed
// the same way wherever it lies in the buffer, so a row gets the same numbers whatever rows come with it.
#include <cstdint>

namespace dragoman::kernels {

void siluMul(const float* gate, const float* up, float* out, std::int64_t count);
// out[i] = silu(x[i]), the same exponential as siluMul (out may alias x).
void silu(const float* x, float* out, std::int64_t count);
// out[i] = x[i] / 2 * (1 + erf(x[i] / sqrt 2)): the exact (erf) form transformers' "gelu" is, through std::erf.
void gelu(const float* x, float* out, std::int64_t count);

}  // namespace dragoman::kernels
