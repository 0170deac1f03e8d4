#pragma once
// Rotary position embedding in the NeoX rotate-half layout, in place: for each row of d floats (d even),
// x = x * cos + rotate_half(x) * sin with rotate_half(x) = [-x[d/2:], x[:d/2]], where cos and sin are
// [positions, d] and row r uses position r % positions (rows laid out [heads, positions, d]). One pass
// instead of the five ATen calls (two muls, neg, cat, add) per q and k of every layer.
#include <cstdint>

namespace dragoman::kernels {

void applyRope(float* x, std::int64_t rows, std::int64_t d, const float* cos, const float* sin, std::int64_t positions);

}  // namespace dragoman::kernels
