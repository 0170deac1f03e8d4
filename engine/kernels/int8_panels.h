#pragma once
// The many-row side of the W8A8 products (kernels/int8_activation_gemm.h), on AVX512-VNNI: weights laid out in
// panels of 64 output columns, each group of 4 depths of 16 columns in one 64-byte vector, so that one vpdpbusd
// multiplies 4 codes of a row (broadcast) into 16 outputs at once. Outputs stay in the accumulators' lanes: no sums
// across lanes, which cost the one-row kernel (a dot product per output) as much as the products at a depth of 384.
//
// A panel is made from weight rows as mapped (packPanel), either once per weight (Int8Panels, what a layer keeps) or
// per call into a thread's scratch (the products amortize it over the rows). The integer sums are the one-row
// kernel's exactly (integers add in any order), so a row's outputs are bit-identical on either side.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

namespace dragoman::kernels {

struct ChannelEpilogue;  // kernels/channel_epilogue.h

// Columns per panel, and the bytes of a panel of depth k.
constexpr std::int64_t kPanelColumns = 64;
// From this many rows on the products take panels, made per call where a weight keeps none (fewer rows take the
// panels a weight keeps, else the one-row kernel, which reads the weights as mapped).
constexpr std::int64_t kPanelRows = 4;
std::int64_t panelBytes(std::int64_t k);

// Rows quantized per token (int8_activation_gemm.cpp): row r's codes at codes[r * stride] (zero past k, at least up
// to the next multiple of 4), the sum of its codes and its scale.
struct QuantizedRows {
    const std::int8_t* codes = nullptr;
    std::int64_t stride = 0;
    const std::int32_t* sums = nullptr;
    const float* scales = nullptr;
};

// Whether this CPU runs the panel products (AVX512-VNNI and BW, and AVX-512 not switched off), and they are not
// switched off for a comparison (setPanelProducts).
bool panelProductsAvailable();
// Switches the panel products off (every row count on the one-row kernel) or back on: `bench kernels` compares the
// two in one process. Not for use while products run on other threads.
void setPanelProducts(bool enabled);

// The CPU's peak for these products: multiply-adds per second of `vpdpbusd` alone (independent accumulators, no
// loads) on every kernel thread at once, best of a few passes of `seconds` each; 0 without AVX512-VNNI.
double vnniPeakMacsPerSecond(double seconds = 0.05);

// Weight rows [first, first + columns) of w [n, k] (columns <= 64) into a panel (panelBytes(k) bytes, 64-byte
// aligned); the missing columns and depths hold zero weights.
void packPanel(const std::int8_t* w, std::int64_t k, std::int64_t first, std::int64_t columns, std::uint8_t* panel);

// y[r][c] for m rows and a panel's first `columns` columns: the rows' codes times the panel's weights, as integers,
// times the row's scale, then (where `epilogue` is not null) times the channel's scale plus its bias, channel
// first + c, each a separate rounding as scaleAndBiasRows() gives them. y's rows are ldy apart. `ahead` (optional):
// a panel of the same depth to fetch into L2 meanwhile.
void panelProducts(const QuantizedRows& x, std::int64_t m, const std::uint8_t* panel, std::int64_t k, std::int64_t columns, float* y,
                   std::int64_t ldy, const ChannelEpilogue* epilogue = nullptr, std::int64_t first = 0,
                   const std::uint8_t* ahead = nullptr);

// Memory the calling thread reads soon (a decoding step's next layer's cached keys and values), fetched into L2 by its
// panel products one line per depth group of a panel's first tile: spread over the products' work, where a loop of
// prefetches stalls on the fetches in flight. Ranges are read in order; a range may be freed before it is fetched
// (a prefetch never faults), but reset() drops them once they are no longer wanted.
class LineFeed {
public:
    void reset();
    void add(const void* data, std::size_t bytes);
    // The next run of up to `lines` contiguous lines: its start and length (null and 0 once everything is taken).
    std::pair<const char*, std::int64_t> take(std::int64_t lines);

private:
    std::vector<std::pair<const char*, const char*>> ranges_;
    std::size_t next_ = 0;
};
LineFeed& threadLineFeed();

// Every panel of a weight [n, k], made once: what a layer that runs many-row products keeps beside its mapped codes.
class Int8Panels {
public:
    Int8Panels(const std::int8_t* w, std::int64_t n, std::int64_t k);
    const std::uint8_t* panel(std::int64_t index) const { return bytes_.get() + index * panelBytes(k_); }
    std::int64_t n() const { return n_; }
    std::int64_t k() const { return k_; }

private:
    struct Free {
        void operator()(std::uint8_t* p) const;
    };
    std::unique_ptr<std::uint8_t, Free> bytes_;
    std::int64_t n_ = 0, k_ = 0;
};

}  // namespace dragoman::kernels
