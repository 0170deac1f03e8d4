#include "kernels/stream_read.h"

#include "kernels/simd.h"
#include "kernels/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace dragoman::kernels {
namespace {

// Four independent sums of 32-byte loads: enough loads in flight to reach the memory limit, not the adder's.
__attribute__((target("avx2,fma,f16c"))) float sumAvx2(const float* p, std::int64_t count) {
    __m256 a = _mm256_setzero_ps(), b = a, c = a, d = a;
    std::int64_t i = 0;
    for (; i + 32 <= count; i += 32) {
        a = _mm256_add_ps(a, _mm256_loadu_ps(p + i));
        b = _mm256_add_ps(b, _mm256_loadu_ps(p + i + 8));
        c = _mm256_add_ps(c, _mm256_loadu_ps(p + i + 16));
        d = _mm256_add_ps(d, _mm256_loadu_ps(p + i + 24));
    }
    float s = sum8(_mm256_add_ps(_mm256_add_ps(a, b), _mm256_add_ps(c, d)));
    for (; i < count; ++i)
        s += p[i];
    return s;
}

float sumPortable(const float* p, std::int64_t count) {
    float s[4] = {0, 0, 0, 0};
    std::int64_t i = 0;
    for (; i + 4 <= count; i += 4)
        for (int j = 0; j < 4; ++j)
            s[j] += p[i + j];
    for (; i < count; ++i)
        s[0] += p[i];
    return s[0] + s[1] + s[2] + s[3];
}

}  // namespace

double streamReadBandwidth(std::size_t bytes, int repeats) {
    const auto count = static_cast<std::int64_t>(bytes / sizeof(float));
    std::unique_ptr<float[], decltype(&std::free)> buffer(static_cast<float*>(std::aligned_alloc(64, count * sizeof(float))), &std::free);
    if (!buffer) return 0;
    auto& pool = ThreadPool::shared();
    // First touch from the threads that will read (their pages, their NUMA node), with values that are not zero
    // pages the kernel could share.
    pool.parallelFor(count, 1 << 20, [&](std::int64_t begin, std::int64_t end) {
        for (std::int64_t i = begin; i < end; ++i)
            buffer[i] = static_cast<float>(i & 1023);
    });
    // Shares of whole cache lines (16 floats), so every thread's loads stay aligned whatever the thread count.
    const std::int64_t chunk = ((count + pool.size() - 1) / pool.size() + 15) / 16 * 16;
    double best = 0;
    std::vector<float> sums(static_cast<std::size_t>(pool.size()) + 1);  // kept, so the reads are not optimised away
    for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        // One contiguous share per thread, as each thread streams its own rows of a weight matrix.
        pool.parallelFor(count, chunk, [&](std::int64_t begin, std::int64_t end) {
            const float* p = buffer.get() + begin;
            sums[static_cast<std::size_t>(begin / chunk)] += hasAvx2() ? sumAvx2(p, end - begin) : sumPortable(p, end - begin);
        });
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = std::max(best, static_cast<double>(count) * sizeof(float) / seconds);
    }
    volatile float sink = sums[0];
    (void)sink;
    return best;
}

}  // namespace dragoman::kernels
