#include "kernels/onednn_matmul.h"

#include "kernels/bf16.h"
#include "kernels/simd.h"
#include "runtime/threads.h"
#include "util/log.h"

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

using dnnl::memory;

// Rows per oneDNN call: bounds the float32 scratch of the split product (2 x 256 rows) and the number of
// distinct shapes oneDNN compiles (a prompt of any length needs at most two per weight shape).
constexpr std::int64_t kChunkRows = 256;
constexpr std::size_t kMaxCachedShapes = 128;

struct Runtime {
    dnnl::engine engine{dnnl::engine::kind::cpu, 0};
    dnnl::stream stream{engine};
    std::mutex mutex;  // one product at a time: the engine thread, or a test's thread
    // (dtype, rows, n, k) -> the primitive, or nullopt when oneDNN only has its reference code for it.
    std::map<std::tuple<int, std::int64_t, std::int64_t, std::int64_t>, std::optional<dnnl::matmul>> primitives;
    std::string lastImpl;
};

Runtime& runtime() {
    static Runtime r;
    return r;
}

// Callers hold the runtime's mutex.
std::optional<dnnl::matmul>& primitiveFor(Runtime& r, memory::data_type dt, std::int64_t m, std::int64_t n, std::int64_t k) {
    const auto key = std::make_tuple(static_cast<int>(dt), m, n, k);
    if (auto it = r.primitives.find(key); it != r.primitives.end()) return it->second;
    if (r.primitives.size() >= kMaxCachedShapes) r.primitives.clear();
    std::optional<dnnl::matmul> made;
    try {
        const memory::desc src({m, k}, dt, memory::format_tag::ab);
        const memory::desc weights({k, n}, dt, memory::format_tag::ba);  // W [N, K] row-major, read as W^T
        const memory::desc dst({m, n}, memory::data_type::f32, memory::format_tag::ab);
        const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src, weights, dst), r.engine);
        r.lastImpl = pd.impl_info_str();
        // The reference implementation is correct but a hundred times slower than the engine's own kernels.
        if (r.lastImpl.find("ref") == std::string::npos) made.emplace(pd);
    } catch (const dnnl::error&) {
        // Unimplemented for this CPU or shape: the caller's kernel runs instead.
    }
    return r.primitives.emplace(key, std::move(made)).first->second;
}

bool run(dnnl::matmul& product, Runtime& r, memory::data_type dt, const void* src, const void* w, float* dst, std::int64_t m,
         std::int64_t n, std::int64_t k) {
    const memory::desc srcDesc({m, k}, dt, memory::format_tag::ab);
    const memory::desc weightDesc({k, n}, dt, memory::format_tag::ba);
    const memory::desc dstDesc({m, n}, memory::data_type::f32, memory::format_tag::ab);
    // oneDNN takes non-const handles; it only reads sources and weights.
    memory srcMem(srcDesc, r.engine, const_cast<void*>(src));
    memory weightMem(weightDesc, r.engine, const_cast<void*>(w));
    memory dstMem(dstDesc, r.engine, dst);
    try {
        ParallelOpenMp threads;
        product.execute(r.stream, {{DNNL_ARG_SRC, srcMem}, {DNNL_ARG_WEIGHTS, weightMem}, {DNNL_ARG_DST, dstMem}});
        r.stream.wait();
    } catch (const dnnl::error& e) {
        log::logger().warn("oneDNN product {}x{}x{} failed ({}); the engine's kernel runs instead", m, n, k, e.what());
        return false;
    }
    return true;
}

// Rows [0, m) of one chunk as stacked bf16 halves, one product, halves added.
bool splitChunk(Runtime& r, const float* x, const std::uint16_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    auto& product = primitiveFor(r, memory::data_type::bf16, 2 * m, n, k);
    if (!product) return false;
    std::vector<std::uint16_t> halves(static_cast<std::size_t>(2 * m * k));
    splitToBf16(x, halves.data(), halves.data() + m * k, m * k);
    std::vector<float> both(static_cast<std::size_t>(2 * m * n));
    if (!run(*product, r, memory::data_type::bf16, halves.data(), w, both.data(), 2 * m, n, k)) return false;
    const float* lo = both.data() + m * n;
    for (std::int64_t i = 0; i < m * n; ++i)
        y[i] = both[i] + lo[i];
    return true;
}

bool bf16Capable(dnnl::cpu_isa isa) {
    const auto bits = static_cast<unsigned>(isa), bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
    return (bits & bf16) == bf16;  // AVX512-BF16, and AMX whose mask contains it
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
    // Split activations: ~1e-5 here; plain bf16 activations would be ~1e-2, a wrong layout ~1.
    if (worst <= 2e-4) return true;
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
        s.name = hasAvx2() ? "avx2 packed" : "openblas widened blocks";
        // A libtorch that bundles its own oneDNN (pytorch.org builds) may bind these calls to another version
        // than the headers this file was built with: then the path stays off.
        const auto* version = dnnl_version();
        if (version->major != DNNL_VERSION_MAJOR || version->minor != DNNL_VERSION_MINOR) {
            log::logger().info("prompt products (bf16 weights): {}; oneDNN {}.{} in the process, built against {}.{}", s.name,
                               version->major, version->minor, DNNL_VERSION_MAJOR, DNNL_VERSION_MINOR);
            return s;
        }
        const auto isa = dnnl::get_effective_cpu_isa();
        const char* env = std::getenv("DRAGOMAN_ONEDNN");
        const bool disabled = env && std::string(env) == "0";
        if (!disabled && bf16Capable(isa) && selfCheckPasses()) {
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

void splitToBf16(const float* x, std::uint16_t* hi, std::uint16_t* lo, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) {
        hi[i] = narrowToBf16(x[i]);
        lo[i] = narrowToBf16(x[i] - widen(hi[i]));
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
    for (std::int64_t row = 0; row < m; row += kChunkRows) {
        const auto rows = std::min(kChunkRows, m - row);
        // A chunk that fails after others succeeded leaves y partly written; the caller recomputes all of it.
        if (!splitChunk(r, x + row * k, w, y + row * n, rows, n, k)) return false;
    }
    return true;
}

bool onednnF32MatmulTransposed(const float* x, const float* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k) {
    auto& r = runtime();
    std::lock_guard lock(r.mutex);
    for (std::int64_t row = 0; row < m; row += kChunkRows) {
        const auto rows = std::min(kChunkRows, m - row);
        auto& product = primitiveFor(r, memory::data_type::f32, rows, n, k);
        if (!product || !run(*product, r, memory::data_type::f32, x + row * k, w, y + row * n, rows, n, k)) return false;
    }
    return true;
}

}  // namespace dragoman::kernels
