#pragma once
// The machine's streaming-read bandwidth: every thread of the kernel pool reads its share of a buffer far larger
// than any cache, as decoding reads weights (several rows side by side, the fastest way found to read memory here). This, not a library's
// matrix-vector product (torch's bf16 GEMV reaches about two thirds of it), is the physical limit a decode rate is held to.
#include <cstddef>

namespace dragoman::kernels {

// Bytes per second, best of `repeats` full passes over a fresh buffer of `bytes` (default 1 GiB).
double streamReadBandwidth(std::size_t bytes = std::size_t(1) << 30, int repeats = 5);

}  // namespace dragoman::kernels
