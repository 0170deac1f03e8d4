#include "devcli/kernels_bench.h"
#include "devcli/median.h"

#include "kernels/attention.h"
#include "kernels/int8_activation_gemm.h"
#include "kernels/int8_panels.h"
#include "kernels/thread_pool.h"
#include "util/stopwatch.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <random>

namespace dragoman::bench {
namespace {

// Seconds per call of `run`: as many calls as take about 50 ms, after one to warm up.
double secondsPerCall(const std::function<void()>& run) {
    run();
    const auto start = SteadyClock::now();
    run();
    const double once = std::max(secondsSince(start), 1e-7);
    const auto calls = std::max<std::int64_t>(1, static_cast<std::int64_t>(0.05 / once));
    const auto timed = SteadyClock::now();
    for (std::int64_t i = 0; i < calls; ++i)
        run();
    return secondsSince(timed) / static_cast<double>(calls);
}

nlohmann::ordered_json benchProducts(const KernelShape& shape, int rounds, double peak) {
    std::mt19937 random(7);
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    std::uniform_int_distribution<int> code(-127, 127);
    std::vector<float> x(static_cast<std::size_t>(shape.m * shape.k)), y(static_cast<std::size_t>(shape.m * shape.n));
    std::vector<std::int8_t> w(static_cast<std::size_t>(shape.n * shape.k));
    for (auto& v : x)
        v = value(random);
    for (auto& c : w)
        c = static_cast<std::int8_t>(code(random));
    // Fewer rows than kernels::kPanelRows make no panels per call: they take kept panels or the one-row kernel.
    const bool panels = kernels::panelProductsAvailable();
    const bool perCallPanels = panels && shape.m >= kernels::kPanelRows;
    const auto kept = panels ? std::make_unique<kernels::Int8Panels>(w.data(), shape.n, shape.k) : nullptr;
    const auto product = [&](const kernels::Int8Panels* p) {
        kernels::int8ActivationMatmulTransposed(x.data(), w.data(), y.data(), shape.m, shape.n, shape.k, p);
    };
    // A model's layers each read other weights, which come from L3 or memory, not from the L2 that one weight
    // repeated stays in: kept panels of copies of the weight, 48 MB in all, taken in turn.
    std::vector<std::unique_ptr<kernels::Int8Panels>> copies;
    if (panels) {
        const auto bytes = static_cast<double>(kernels::panelBytes(shape.k)) * static_cast<double>((shape.n + 63) / 64);
        const auto count = std::max<std::int64_t>(2, static_cast<std::int64_t>(std::ceil(48e6 / bytes)));
        for (std::int64_t i = 0; i < count; ++i)
            copies.push_back(std::make_unique<kernels::Int8Panels>(w.data(), shape.n, shape.k));
    }
    std::size_t next = 0;
    std::vector<double> oneRow, perCall, keptRate, streamedRate;
    const double macs = static_cast<double>(shape.m * shape.n * shape.k);
    for (int r = 0; r < rounds; ++r) {
        kernels::setPanelProducts(false);
        oneRow.push_back(macs / secondsPerCall([&] { product(nullptr); }));
        kernels::setPanelProducts(true);
        if (!panels) continue;
        if (perCallPanels) perCall.push_back(macs / secondsPerCall([&] { product(nullptr); }));
        keptRate.push_back(macs / secondsPerCall([&] { product(kept.get()); }));
        streamedRate.push_back(macs / secondsPerCall([&] { product(copies[next++ % copies.size()].get()); }));
    }
    nlohmann::ordered_json out{{"m", shape.m}, {"n", shape.n}, {"k", shape.k}, {"one_row_gmacs", median(oneRow) / 1e9}};
    if (panels) {
        if (perCallPanels) out["panels_per_call_gmacs"] = median(perCall) / 1e9;
        out["panels_kept_gmacs"] = median(keptRate) / 1e9;
        out["panels_streamed_gmacs"] = median(streamedRate) / 1e9;
        out["kept_vs_one_row"] = median(keptRate) / median(oneRow);
        if (peak > 0) out["kept_of_peak"] = median(keptRate) / peak;
    }
    return out;
}

nlohmann::ordered_json benchAttention(std::int64_t keys, int rounds) {
    constexpr std::int64_t kRequests = 16, kHeads = 6, kHeadDim = 64;
    std::mt19937 random(11);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    const auto width = kHeads * kHeadDim;
    std::vector<float> q(static_cast<std::size_t>(kRequests * width)), out(q.size());
    // Each request's caches as a decoder keeps them: [heads, capacity, headDim], the first `keys` rows filled.
    std::vector<float> cacheK(static_cast<std::size_t>(kRequests * kHeads * keys * kHeadDim)), cacheV(cacheK.size());
    for (auto* v : {&q, &cacheK, &cacheV})
        for (auto& f : *v)
            f = value(random);
    std::vector<kernels::AttentionRequest> requests;
    for (std::int64_t r = 0; r < kRequests; ++r) {
        const auto base = r * kHeads * keys * kHeadDim;
        requests.push_back(
            {{cacheK.data() + base, 0, keys * kHeadDim, kHeadDim}, {cacheV.data() + base, 0, keys * kHeadDim, kHeadDim}, 1, keys});
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
    std::vector<double> perKey;
    for (int r = 0; r < rounds; ++r) {
        const double seconds = secondsPerCall(
            [&] { kernels::attendOneQueryEach(q.data(), requests.data(), kRequests, out.data(), kHeads, 1, kHeadDim, scale); });
        perKey.push_back(seconds / static_cast<double>(kRequests * kHeads * keys) * 1e9);
    }
    return {{"requests", kRequests}, {"heads", kHeads}, {"head_dim", kHeadDim}, {"keys", keys}, {"ns_per_key_and_head", median(perKey)}};
}

}  // namespace

nlohmann::ordered_json benchKernels(const KernelsBenchOptions& options) {
    // The peak probed before and after, the higher kept: a busy minute lowers a probe, never raises one.
    double peak = kernels::vnniPeakMacsPerSecond();
    nlohmann::ordered_json out{{"threads", ThreadPool::shared().size()},
                               {"w8a8_kernel", kernels::int8ActivationKernel()},
                               {"panels", kernels::panelProductsAvailable()},
                               {"vnni_peak_gmacs", peak / 1e9}};
    out["products"] = nlohmann::ordered_json::array();
    for (const auto& shape : options.shapes)
        out["products"].push_back(benchProducts(shape, options.rounds, peak));
    peak = std::max(peak, kernels::vnniPeakMacsPerSecond());
    out["vnni_peak_gmacs"] = peak / 1e9;
    for (auto& p : out["products"])
        if (p.contains("panels_kept_gmacs") && peak > 0) p["kept_of_peak"] = p["panels_kept_gmacs"].get<double>() * 1e9 / peak;
    out["attention"] = nlohmann::ordered_json::array();
    for (const auto keys : options.keys)
        out["attention"].push_back(benchAttention(keys, options.rounds));
    return out;
}

}  // namespace dragoman::bench
