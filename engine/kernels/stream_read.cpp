#include "kernels/stream_read.h"

#include "kernels/simd.h"
#include "kernels/simd512.h"
#include "kernels/thread_pool.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

namespace dragoman::kernels {
namespace {

// One contiguous share per thread, four independent sums of 32-byte loads: enough loads in flight to reach the
// memory limit, not the adder's.
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

// Or as a decoding step reads a weight matrix: blocks of kProbeStreams rows of kProbeRowFloats (4 KiB, a bf16
// row of K = 2048) side by side, each block summed over its rows' lines in lockstep, blocks claimed a few at a time
// by the pool's threads. On the 2-core Zen 5 VMs this read 60-75 GB/s in minutes where one contiguous stream per thread
// read 46-50 (and the engine's bf16 decoding tiles, six rows each, went past that single stream: a limit a kernel can
// beat is no limit), and less than it in others; the limit is the faster of the two in each pass.
constexpr std::int64_t kProbeStreams = 6;
constexpr std::int64_t kProbeRowFloats = 1024;
constexpr std::int64_t kProbeBlockFloats = kProbeStreams * kProbeRowFloats;
constexpr std::int64_t kProbeBlocksPerClaim = 16;

// One accumulator per row, four 64-byte steps per turn of the loop: nothing but loads and adds between the loads.
DRAGOMAN_AVX512 float sumBlockAvx512(const float* p) {
    __m512 acc[kProbeStreams];
    for (auto& a : acc)
        a = _mm512_setzero_ps();
    for (std::int64_t d = 0; d < kProbeRowFloats; d += 64) {
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u)
#pragma GCC unroll 6
            for (std::int64_t r = 0; r < kProbeStreams; ++r)
                acc[r] = _mm512_add_ps(acc[r], _mm512_loadu_ps(p + r * kProbeRowFloats + d + 16 * u));
    }
    for (std::int64_t r = 1; r < kProbeStreams; ++r)
        acc[0] = _mm512_add_ps(acc[0], acc[r]);
    return sum16(acc[0]);
}

__attribute__((target("avx2,fma,f16c"))) float sumBlockAvx2(const float* p) {
    __m256 acc[kProbeStreams];
    for (auto& a : acc)
        a = _mm256_setzero_ps();
    for (std::int64_t d = 0; d < kProbeRowFloats; d += 32) {
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u)
#pragma GCC unroll 6
            for (std::int64_t r = 0; r < kProbeStreams; ++r)
                acc[r] = _mm256_add_ps(acc[r], _mm256_loadu_ps(p + r * kProbeRowFloats + d + 8 * u));
    }
    for (std::int64_t r = 1; r < kProbeStreams; ++r)
        acc[0] = _mm256_add_ps(acc[0], acc[r]);
    return sum8(acc[0]);
}

float sumBlockPortable(const float* p) {
    float s[kProbeStreams] = {};
    for (std::int64_t d = 0; d < kProbeRowFloats; ++d)
        for (std::int64_t r = 0; r < kProbeStreams; ++r)
            s[r] += p[r * kProbeRowFloats + d];
    float total = 0;
    for (float v : s)
        total += v;
    return total;
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
    const std::int64_t blocks = count / kProbeBlockFloats;
    const auto sumBlock = hasAvx512() ? sumBlockAvx512 : hasAvx2() ? sumBlockAvx2 : sumBlockPortable;
    // Shares of whole cache lines (16 floats), so every thread's loads stay aligned whatever the thread count.
    const std::int64_t share = ((count + pool.size() - 1) / pool.size() + 15) / 16 * 16;
    double best = 0;
    // One slot per share or claim, kept so the reads are not optimised away.
    std::vector<float> sums(static_cast<std::size_t>(std::max<std::int64_t>(pool.size(), blocks / kProbeBlocksPerClaim + 1)));
    const auto timed = [&](const auto& pass, std::int64_t bytesRead) {
        const auto start = std::chrono::steady_clock::now();
        pass();
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        best = std::max(best, static_cast<double>(bytesRead) / seconds);
    };
    for (int r = 0; r < repeats; ++r) {
        timed(
            [&] {
                pool.parallelFor(count, share, [&](std::int64_t begin, std::int64_t end) {
                    const float* p = buffer.get() + begin;
                    sums[static_cast<std::size_t>(begin / share)] += hasAvx2() ? sumAvx2(p, end - begin) : sumPortable(p, end - begin);
                });
            },
            count * static_cast<std::int64_t>(sizeof(float)));
        timed(
            [&] {
                pool.parallelFor(blocks, kProbeBlocksPerClaim, [&](std::int64_t begin, std::int64_t end) {
                    float s = 0;
                    for (std::int64_t b = begin; b < end; ++b)
                        s += sumBlock(buffer.get() + b * kProbeBlockFloats);
                    sums[static_cast<std::size_t>(begin / kProbeBlocksPerClaim)] += s;
                });
            },
            blocks * kProbeBlockFloats * static_cast<std::int64_t>(sizeof(float)));
    }
    volatile float sink = sums[0];
    (void)sink;
    return best;
}

}  // namespace dragoman::kernels
