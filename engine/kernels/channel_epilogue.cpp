#include "kernels/channel_epilogue.h"

#include "kernels/thread_pool.h"

#include <algorithm>

namespace dragoman::kernels {
namespace {

// Values per claim of the pool: below this much a hand-off costs more than the pass.
constexpr std::int64_t kGrain = std::int64_t{16} << 10;

// Values [begin, end) of the rows laid end to end.
void pass(float* y, std::int64_t n, const ChannelEpilogue& e, std::int64_t begin, std::int64_t end) {
    const float* __restrict scale = e.scale;
    const float* __restrict bias = e.bias;
    while (begin < end) {
        const auto j0 = begin % n, count = std::min(n - j0, end - begin);
        float* __restrict row = y + begin;
        if (scale && e.scalePerTensor) {
            const float s = scale[0];
            if (bias)
                for (std::int64_t j = 0; j < count; ++j)
                    row[j] = row[j] * s + bias[j0 + j];
            else
                for (std::int64_t j = 0; j < count; ++j)
                    row[j] *= s;
        } else if (scale && bias) {
            for (std::int64_t j = 0; j < count; ++j)
                row[j] = row[j] * scale[j0 + j] + bias[j0 + j];
        } else if (scale) {
            for (std::int64_t j = 0; j < count; ++j)
                row[j] *= scale[j0 + j];
        } else {
            for (std::int64_t j = 0; j < count; ++j)
                row[j] += bias[j0 + j];
        }
        begin += count;
    }
}

}  // namespace

void scaleAndBiasRows(float* y, std::int64_t rows, std::int64_t n, const ChannelEpilogue& epilogue) {
    if ((!epilogue.scale && !epilogue.bias) || rows <= 0 || n <= 0) return;
    ThreadPool::shared().parallelFor(rows * n, kGrain, [&](std::int64_t begin, std::int64_t end) { pass(y, n, epilogue, begin, end); });
}

}  // namespace dragoman::kernels
