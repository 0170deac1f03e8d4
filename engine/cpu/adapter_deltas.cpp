#include "cpu/adapter_deltas.h"

#include "cpu/projection.h"
#include "cpu/rows.h"

#include <algorithm>
#include <cmath>

namespace dragoman::cpu {
void addAdapterDeltas(const float* x, std::int64_t rows, std::int64_t in, std::int64_t out, std::int64_t slot,
                      const Adapter* const* adapters, float* y, DeltaScratch& s) {
    if (!adapters) return;
    for (std::int64_t first = 0; first < rows; ++first) {
        const Adapter* adapter = adapters[first];
        if (!adapter || std::find(adapters, adapters + first, adapter) != adapters + first) continue;  // none, or done
        const LowRank* d = adapter->at(slot);
        if (!d) continue;
        std::vector<std::int64_t> mine;
        for (std::int64_t r = first; r < rows; ++r)
            if (adapters[r] == adapter) mine.push_back(r);
        const auto m = static_cast<std::int64_t>(mine.size());
        const bool all = m == rows;
        const float* rowsIn = x;
        if (!all) {
            float* gathered = sized(s.gathered, m * in);
            for (std::int64_t i = 0; i < m; ++i)
                std::copy_n(x + mine[static_cast<std::size_t>(i)] * in, in, gathered + i * in);
            rowsIn = gathered;
        }
        float* low = sized(s.lowRank, m * d->a.rows);
        float* delta = sized(s.delta, m * out);
        project(rowsIn, m, d->a, low, false);
        project(low, m, d->b, delta, false);
        const auto scale = static_cast<float>(d->scale);
        for (std::int64_t i = 0; i < m; ++i) {
            float* target = y + mine[static_cast<std::size_t>(i)] * out;
            for (std::int64_t j = 0; j < out; ++j)
                target[j] = std::fma(scale, delta[i * out + j], target[j]);
        }
    }
}

}  // namespace dragoman::cpu
