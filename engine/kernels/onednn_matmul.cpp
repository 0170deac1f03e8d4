#include "kernels/onednn_matmul.h"

#include "kernels/bf16.h"
#include "kernels/bf16_dot_gemm.h"
#include "kernels/simd512.h"
#include "kernels/threads.h"
#include "util/log.h"
#include "util/overrides.h"

#include <dnnl.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <tuple>
#include <vector>

namespace dragoman::kernels {
namespace {

// narrowToBf16 on 8 floats: round to nearest even on the bits, NaN kept quiet.
__attribute__((target("avx2,fma,f16c"))) __m256i narrow8(__m256 x) {
    const __m256i bits = _mm256_castps_si256(x);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb));
    const __m256i quiet = _mm256_or_si256(bits, _mm256_set1_epi32(0x400000));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(x, x, _CMP_UNORD_Q));
    return _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quiet, nan), 16);  // bf16 in each lane's low half
}

__attribute__((target("avx2,fma,f16c"))) __m256 widen8(__m256i bf16) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(bf16, 16));
}

__attribute__((target("avx2,fma,f16c"))) void store8(std::uint16_t* out, __m256i bf16) {
    const __m256i packed = _mm256_packus_epi32(bf16, bf16);  // per 128-bit lane: 4 values twice
    const __m256i ordered = _mm256_permute4x64_epi64(packed, 0b1000);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(ordered));
}

// A prompt's activations are split once per projection: 8 at a time, it is a few percent of the product.
__attribute__((target("avx2,fma,f16c"))) std::int64_t splitAvx2(const float* x, std::uint16_t* hi, std::uint16_t* mid, std::uint16_t* lo,
                                                                std::int64_t count) {
    std::int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        const __m256 v = _mm256_loadu_ps(x + i);
        const __m256i h = narrow8(v);
        const __m256 rest = _mm256_sub_ps(v, widen8(h));
        const __m256i m = narrow8(rest);
        const __m256i l = narrow8(_mm256_sub_ps(rest, widen8(m)));
        store8(hi + i, h);
        store8(mid + i, m);
        store8(lo + i, l);
    }
    return i;
}

using dnnl::memory;

// Prompt rows per oneDNN call: bounds the scratch of the split product (3 x 256 rows of terms) and the number of
// distinct shapes oneDNN compiles (a prompt of any length needs at most two per weight shape). 512 was slower on
// AMX: a 500-token HY-MT 1.8B prompt took 8.1-8.3 s in one chunk against 6.0-6.1 s in two.
constexpr std::int64_t kChunkRows = 256;
constexpr std::size_t kMaxCachedShapes = 128;
constexpr std::int64_t kSplitTerms = 3;  // bf16 terms per float32 activation (onednn_matmul.h)
// The split product's scratch kept between calls, at most: a 256-row chunk of HY-MT 7B's MLP needs 50 MB.
constexpr std::size_t kKeptScratchBytes = std::size_t{64} << 20;

struct Runtime {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::mutex mutex;  // one product at a time: the engine thread, or a test's thread
    // (dtype, rows, n, k) -> the primitive, or nullopt when oneDNN only has its reference code for it.
    std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, std::optional<dnnl::matmul>> primitives;
    std::string lastImpl;
    // Scratch kept between calls: fresh multi-megabyte vectors were new pages that the kernel zeroed on every
    // product (a third of a prompt's time went to clearing pages).
    std::vector<std::uint16_t> terms;
    std::vector<float> parts;
    std::vector<std::uint16_t> panel;  // widened 8-bit weights (splitChunkEightBit)
};

Runtime& runtime() {
    static Runtime r;
    return r;
}

// x [rows, K] times W^T: W [N, K] row-major is oneDNN's K x N weights in its "ba" layout, which its AMX and
// AVX512 kernels repack block by block as they stream it. (The transposed product, y^T = W x^T with W as the
// left operand read in place, measured no faster: 0.8-1.5x on the HY-MT 1.8B shapes, AMX, 2 cores, weights
// streamed from memory.)
struct Descs {
    memory::desc activations, weights, out;
};

Descs descsFor(memory::data_type dt, std::int64_t n, std::int64_t rows, std::int64_t k) {
    return {memory::desc({rows, k}, dt, memory::format_tag::ab), memory::desc({k, n}, dt, memory::format_tag::ba),
            memory::desc({rows, n}, memory::data_type::f32, memory::format_tag::ab)};
}

// Callers hold the runtime's mutex.
std::optional<dnnl::matmul>& primitiveFor(Runtime& r, memory::data_type dt, std::int64_t n, std::int64_t rows, std::int64_t k) {
    const auto key = std::make_tuple(static_cast<int>(dt), n, rows, k);
    if (auto it = r.primitives.find(key); it != r.primitives.end()) return it->second;
    if (r.primitives.size() >= kMaxCachedShapes) r.primitives.clear();
    std::optional<dnnl::matmul> made;
    try {
        const auto d = descsFor(dt, n, rows, k);
        const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(d.activations, d.weights, d.out), r.engine);
        r.lastImpl = pd.impl_info_str();
        // The reference implementation is correct but a hundred times slower than the engine's own kernels.
        if (r.lastImpl.find("ref") == std::string::npos) made.emplace(pd);
    } catch (const dnnl::error&) {
        // Unimplemented for this CPU or shape: the caller's kernel runs instead.
    }
    return r.primitives.emplace(key, std::move(made)).first->second;
}

// out [rows, n] = x [rows, k] W^T for W [n, k], both of type dt.
bool run(Runtime& r, memory::data_type dt, const void* x, const void* w, float* out, std::int64_t rows, std::int64_t n, std::int64_t k) {
    // oneDNN fixes a primitive's thread count when it creates it, so creation is inside the scope too: made
    // outside it, every product ran on one thread (4.4 instead of 2.3 ms for a 1.8B MLP projection, 2 cores).
    ParallelOpenMp threads;
    auto& product = primitiveFor(r, dt, n, rows, k);
    if (!product) return false;
    const auto d = descsFor(dt, n, rows, k);
    // oneDNN takes non-const handles; it only reads sources and weights.
    memory weightMem(d.weights, r.engine, const_cast<void*>(w));
    memory activationMem(d.activations, r.engine, const_cast<void*>(x));
    memory outMem(d.out, r.engine, out);
    try {
        product->execute(r.stream, {{DNNL_ARG_SRC, activationMem}, {DNNL_ARG_WEIGHTS, weightMem}, {DNNL_ARG_DST, outMem}});
        r.stream.wait();
    } catch (const dnnl::error& e) {
        log::logger().warn("oneDNN product {}x{}x{} failed ({}); the engine's kernel runs instead", rows, n, k, e.what());
        return false;
    }
    return true;
}

// Row counts that are not a multiple of 32 run through oneDNN 2.6's slow edge code in the AMX kernels: a 500-token
// prompt's second chunk (732 rows of terms) took 58 ms per MLP projection against 12 ms for 736 rows. The split
// products are padded with zero rows to the next multiple; below 128 rows it makes no difference.
std::int64_t paddedRows(std::int64_t rows) {
    constexpr std::int64_t kRowMultiple = 32;
    return (rows + kRowMultiple - 1) / kRowMultiple * kRowMultiple;
}

// The rows [0, m) of a chunk as three stacked bf16 terms [hi; mid; lo], padded with zero rows to paddedRows().
void stackTerms(std::uint16_t* terms, const float* x, std::int64_t m, std::int64_t k) {
    splitToBf16(x, terms, terms + m * k, terms + 2 * m * k, m * k);
    std::fill(terms + kSplitTerms * m * k, terms + paddedRows(kSplitTerms * m) * k, std::uint16_t{0});
}

// y [m, n] (row stride ldy) from the products of the three terms, parts [3m, n].
void addTerms(const float* parts, float* y, std::int64_t m, std::int64_t n, std::int64_t ldy) {
    const float* hi = parts;
    const float* mid = hi + m * n;
    const float* lo = mid + m * n;
    // Smallest first: the sum rounds once where it matters, as a float32 dot product would.
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j)
            y[i * ldy + j] = hi[i * n + j] + (mid[i * n + j] + lo[i * n + j]);
}

// The kept scratch when it is large enough for a product, else a buffer of this call's own: it serves the
// projections of a prompt, while a larger product (all of a long prompt's logits over a 120k vocabulary: 370 MB of
// parts) gets buffers that are freed afterwards.
struct Scratch {
    std::vector<std::uint16_t> ownTerms;
    std::vector<float> ownParts;
    std::uint16_t* terms;
    float* parts;
    Scratch(Runtime& r, std::size_t termCount, std::size_t partCount) {
        const bool kept = termCount * sizeof(std::uint16_t) + partCount * sizeof(float) <= kKeptScratchBytes;
        auto& termBuffer = kept ? r.terms : ownTerms;
        auto& partBuffer = kept ? r.parts : ownParts;
        if (termBuffer.size() < termCount) termBuffer.resize(termCount);
        if (partBuffer.size() < partCount) partBuffer.resize(partCount);
        terms = termBuffer.data();
        parts = partBuffer.data();
    }
};

// Rows [0, m) of one chunk as three stacked bf16 terms, one product, the terms' results added.
bool splitChunk(Runtime& r, const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    const auto rows = paddedRows(kSplitTerms * m);
    Scratch scratch(r, static_cast<std::size_t>(rows * k), static_cast<std::size_t>(rows * n));
    stackTerms(scratch.terms, x, m, k);
    if (!run(r, memory::data_type::bf16, scratch.terms, w, scratch.parts, rows, n, k)) return false;
    addTerms(scratch.parts, y, m, n, n);
    return true;
}

// Weight rows per panel of widened 8-bit weights: about 1 MiB of bf16 (in L2 while oneDNN reads it), at least
// 64 rows, and panels of equal size (one compiled shape, as inChunks does for prompt rows).
std::int64_t panelRows(std::int64_t n, std::int64_t k) {
    const auto target = std::max<std::int64_t>(64, (std::int64_t{1} << 19) / k / 32 * 32);
    const auto panels = (n + target - 1) / target;
    return (n + panels - 1) / panels;
}

template <typename W>
__attribute__((target("avx2,fma,f16c"))) std::int64_t widenToBf16Avx2(const W* w, std::uint16_t* out, std::int64_t count) {
    std::int64_t i = 0;
    for (; i + 8 <= count; i += 8) {
        // Exact values (8-bit codes fit in bf16's 8 significant bits), so the top halves are the bf16 values.
        const __m256 v = _mm256_mul_ps(load8(w + i), _mm256_set1_ps(kSumScale<W>));
        store8(out + i, _mm256_srli_epi32(_mm256_castps_si256(v), 16));
    }
    return i;
}

// On oneDNN's own OpenMP team: between its products those workers spin on the other cores, and handing the
// widening to the kernel pool made both wait for cores (a 40-token int8 prompt took 25 s instead of 4).
template <typename W>
void widenToBf16(const W* w, std::uint16_t* out, std::int64_t count) {
    onOpenMpTeam([&](int part, int parts) {
        const auto begin = count * part / parts / 8 * 8, end = part + 1 == parts ? count : count * (part + 1) / parts / 8 * 8;
        for (std::int64_t i = begin + (hasAvx2() ? widenToBf16Avx2(w + begin, out + begin, end - begin) : 0); i < end; ++i)
            out[i] = narrowToBf16(widen(w[i]));
    });
}

// The same for 8-bit weights W [n, k]: panel by panel widened to bf16 (never the whole matrix), each panel's
// product written into its columns of y.
template <typename W>
bool splitChunkEightBit(Runtime& r, const float* x, const W* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    const auto rows = paddedRows(kSplitTerms * m), panel = panelRows(n, k);
    Scratch scratch(r, static_cast<std::size_t>(rows * k), static_cast<std::size_t>(rows * panel));
    stackTerms(scratch.terms, x, m, k);
    if (r.panel.size() < static_cast<std::size_t>(panel * k)) r.panel.resize(static_cast<std::size_t>(panel * k));
    for (std::int64_t j = 0; j < n; j += panel) {
        const auto width = std::min(panel, n - j);
        widenToBf16(w + j * k, r.panel.data(), width * k);
        if (!run(r, memory::data_type::bf16, scratch.terms, r.panel.data(), scratch.parts, rows, width, k)) return false;
        addTerms(scratch.parts, y + j, m, width, n);
    }
    return true;
}

// Calls product(firstRow, rows) for m rows in chunks of equal size (500 rows: 250 + 250, not 256 + 244): one
// compiled shape, and no small last chunk. Stops at the first failure; a chunk that fails after others succeeded
// leaves y partly written, and the caller recomputes all of it.
template <typename Product>
bool inChunks(std::int64_t m, Product&& product) {
    const auto chunks = (m + kChunkRows - 1) / kChunkRows;
    const auto chunkRows = (m + chunks - 1) / chunks;
    for (std::int64_t row = 0; row < m; row += chunkRows)
        if (!product(row, std::min(chunkRows, m - row))) return false;
    return true;
}

bool hasIsa(dnnl::cpu_isa isa, dnnl::cpu_isa wanted) {
    const auto bits = static_cast<unsigned>(isa), mask = static_cast<unsigned>(wanted);
    return (bits & mask) == mask;  // AMX's mask contains AVX512-BF16's
}

// AMX by default: the three-term split triples the arithmetic, which AMX's tile products absorb (a 40-token
// HY-MT 1.8B prompt 0.49 s against 0.91 s on the AVX2 kernel, 500 tokens 5.8 against 10.1 s, 2 cores). AVX512-BF16
// alone does bf16 dot products at about twice the float32 FMA rate, so three terms would likely lose to the AVX2
// kernel; there bf16 models' prompts take bf16_dot_gemm.h (bf16 activations) and 8-bit ones the AVX-512 packed
// kernel. DRAGOMAN_ONEDNN=1 allows oneDNN there for a trial.
bool wanted(dnnl::cpu_isa isa, const std::string& setting) {
    if (setting == "0") return false;
    if (setting == "1") return hasIsa(isa, dnnl::cpu_isa::avx512_core_bf16);
    return hasIsa(isa, dnnl::cpu_isa::avx512_core_amx);
}

const char* isaName(dnnl::cpu_isa isa) {
    switch (isa) {
        case dnnl::cpu_isa::avx512_core_amx:
            return "AMX";
        case dnnl::cpu_isa::avx512_core_bf16:
            return "AVX512-BF16";
        case dnnl::cpu_isa::avx512_core_vnni:
            return "AVX512-VNNI";
        case dnnl::cpu_isa::avx512_core:
            return "AVX512";
        case dnnl::cpu_isa::avx2_vnni:
            return "AVX2-VNNI";
        case dnnl::cpu_isa::avx2:
            return "AVX2";
        default:
            return "older";
    }
}

// A product on random data against float64: the path is only used when it gives the float32 answer.
bool selfCheckPasses() {
    constexpr std::int64_t m = 40, n = 24, k = 200;
    std::vector<float> x(m * k), y(m * n);
    std::vector<std::uint16_t> w(n * k);
    std::uint32_t state = 12345;
    auto next = [&] { return static_cast<float>((state = state * 1664525u + 1013904223u) >> 8) / 16777216.0f * 2.0f - 1.0f; };
    for (auto& v : x)
        v = next();
    for (auto& v : w)
        v = narrowToBf16(next());
    if (!onednnBf16MatmulTransposed(x.data(), w.data(), y.data(), m, n, k)) return false;
    double worst = 0;
    for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            double exact = 0;
            for (std::int64_t d = 0; d < k; ++d)
                exact += static_cast<double>(x[i * k + d]) * widen(w[j * k + d]);
            worst = std::max(worst, std::abs(exact - y[i * n + j]));
        }
    // Split activations: float32 rounding, ~1e-6 here; two terms would be ~1e-5, plain bf16 activations ~1e-2,
    // a wrong layout ~1.
    if (worst <= 2e-5) return true;
    log::logger().warn("oneDNN bf16 product is off by {} on a self-check; prompts use the engine's AVX2 kernel", worst);
    return false;
}

struct Readiness {
    bool ready = false;
    std::string name;
};

const Readiness& readiness() {
    static const Readiness state = [] {
        Readiness s;
        // Where oneDNN's path stays off, bf16_dot_gemm.h takes prompts on CPUs with AVX512-BF16.
        s.name = hasAvx512Bf16() && environmentOverrides().bf16Activations ? "avx512-bf16 dot tiles (bf16 activations)"
                 : hasAvx512()                                             ? "avx512 packed"
                 : hasAvx2()                                               ? "avx2 packed"
                                                                           : "openblas widened blocks";
        // A libtorch that bundles its own oneDNN (pytorch.org builds) may bind these calls to another version
        // than the headers this file was built with: then the path stays off.
        const auto* version = dnnl_version();
        if (version->major != DNNL_VERSION_MAJOR || version->minor != DNNL_VERSION_MINOR) {
            log::logger().info("prompt products (bf16 weights): {}; oneDNN {}.{} in the process, built against {}.{}", s.name,
                               version->major, version->minor, DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR);
            return s;
        }
        const auto isa = dnnl::get_effective_cpu_isa();
        const auto& setting = environmentOverrides().onednn;
        const bool disabled = setting == "0";
        if (wanted(isa, setting) && selfCheckPasses()) {
            s.ready = true;
            std::lock_guard lock(runtime().mutex);
            s.name = "onednn " + runtime().lastImpl + " (" + isaName(isa) + ")";
        }
        log::logger().info("prompt products (bf16 weights): {}; oneDNN sees {}{}", s.name, isaName(isa),
                           disabled ? ", turned off by DRAGOMAN_ONEDNN=0" : "");
        return s;
    }();
    return state;
}

}  // namespace

void splitToBf16(const float* x, std::uint16_t* hi, std::uint16_t* mid, std::uint16_t* lo, std::int64_t count) {
    const std::int64_t done = hasAvx2() ? splitAvx2(x, hi, mid, lo, count) : 0;
    for (std::int64_t i = done; i < count; ++i) {
        hi[i] = narrowToBf16(x[i]);
        const float rest = x[i] - widen(hi[i]);  // exact: the rounding error of a float32 is a float32
        mid[i] = narrowToBf16(rest);
        lo[i] = narrowToBf16(rest - widen(mid[i]));
    }
}

bool onednnBf16Ready() {
    return readiness().ready;
}

std::string promptKernelName() {
    return readiness().name;
}

bool onednnBf16MatmulTransposed(const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    auto& r = runtime();
    std::lock_guard lock(r.mutex);
    return inChunks(m, [&](std::int64_t row, std::int64_t rows) { return splitChunk(r, x + row * k, w, y + row * n, rows, n, k); });
}

bool onednnEightBitMatmulTransposed(const float* x, const void* w, WeightType type, float* y, std::int64_t m, std::int64_t n,
                                    std::int64_t k) {
    auto& r = runtime();
    std::lock_guard lock(r.mutex);
    return inChunks(m, [&](std::int64_t row, std::int64_t rows) {
        return type == WeightType::I8 ? splitChunkEightBit(r, x + row * k, static_cast<const std::int8_t*>(w), y + row * n, rows, n, k)
                                      : splitChunkEightBit(r, x + row * k, static_cast<const Fp8E4M3*>(w), y + row * n, rows, n, k);
    });
}

bool onednnF32MatmulTransposed(const float* x, const float* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    auto& r = runtime();
    std::lock_guard lock(r.mutex);
    return inChunks(
        m, [&](std::int64_t row, std::int64_t rows) { return run(r, memory::data_type::f32, x + row * k, w, y + row * n, rows, n, k); });
}

}  // namespace dragoman::kernels
