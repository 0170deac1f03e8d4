#pragma once
// The median the benchmarks report of their rounds (the mean of the middle two of an even count; 0 for none).
#include <algorithm>
#include <vector>

namespace dragoman::bench {

inline double median(std::vector<double> values) {
    if (values.empty()) return 0;
    std::sort(values.begin(), values.end());
    const auto n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace dragoman::bench
