#pragma once
// The token greedy decoding picks from a row of scores, as torch.argmax picks it: the first maximal value, a NaN
// counting as the largest (the first NaN wins). Every sequence runs it once per token over the whole vocabulary
// (16,004 scores for the bundled model, 120,818 for HY-MT): as a scalar loop it took ~10 µs of each row's share of
// the bundled model's batched step; on AVX-512 it is two vector passes (the maximum, then its first place).
#include <cstdint>

namespace dragoman::kernels {

// 0 for an empty row.
std::int64_t firstArgmax(const float* row, std::int64_t n);

}  // namespace dragoman::kernels
