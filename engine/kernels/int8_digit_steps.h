#pragma once
// Decoding steps of int8 weights (as mapped) for a bf16-derived model on CPUs with AVX512-VNNI: each activation row
// becomes a 24-bit fixed-point vector held as three signed 8-bit digits, and `vpdpbusd` multiplies 64 codes by 64
// digits in one instruction with exact integer sums.
//
// Why: a decoding step reads every weight once, and the byte tables of eight_bit_dot_steps.cpp spend about ten vector
// instructions widening 64 int8 codes to bf16 before two vdpbf16ps, too many to keep enough loads in flight in a fast
// minute. Here 64 codes take one load, one xor and three vpdpbusd. Through the 1.8B's int8 matrices (one row, 2
// threads, Zen 5, alternating in one process): 49-56 GB/s where the byte tables read 43-48 and bf16 weights 55-59.
//
// Semantics: row r is scaled to integers X = round(x * 8355000 / max|x|) (|X| < 2^23, so X = d0 + 256 d1 + 65536 d2
// with every digit in [-128, 127]); the weights' codes are offset to unsigned (code + 128, the offset's share
// subtracted through each digit plane's sum) and every product and sum is an exact integer, scaled once at the end.
// The error of an output is at most max|x| / 8355000 times the sum of its codes' magnitudes (about 2^-23 of the row's
// largest value per product, where bf16 rounding errs by 2^-9 of each value), and an output does not depend on the
// other rows, the tile shape or the split over threads. A row with a NaN or an infinity gives NaN everywhere.
#include <cstddef>
#include <cstdint>

namespace dragoman::kernels {

// AVX-512F/BW and VNNI.
bool int8DigitSteps();

// M activation rows as digit planes: row r's digit q at digits[(3 r + q) kp + skip + i] for value i (zero before and
// after), its scale and the sum of each plane's digits.
struct Int8DigitRows {
    const std::int8_t* digits = nullptr;
    std::int64_t kp = 0;
    const double* scale = nullptr;            // [M]: X * scale is the value
    const std::int64_t* digitSums = nullptr;  // [3 M]
};

// x [M, K] as digit planes laid out `skip` values late, in per-thread scratch kept apart by `slot` (reused by the
// next call with the same slot on this thread).
Int8DigitRows int8DigitRows(const float* x, std::int64_t m, std::int64_t k, std::int64_t skip, std::size_t slot = 0);

// y[r, j] for the M rows against weight rows [begin, end) of int8 codes w [N, K] (the raw products, before the layer's
// scale), each read from the 64-byte line at w + j K - skip.
void int8DigitBlock(const Int8DigitRows& x, std::int64_t m, const std::int8_t* w, std::int64_t k, std::int64_t skip, float* y,
                    std::int64_t ldy, std::int64_t begin, std::int64_t end);

}  // namespace dragoman::kernels
