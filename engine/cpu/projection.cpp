#include "cpu/projection.h"

#include "kernels/bf16_dot_gemm.h"
#include "kernels/bf16_matmul.h"
#include "kernels/eight_bit_dot_steps.h"
#include "kernels/int8_activation_gemm.h"
#include "kernels/onednn_matmul.h"
#include "kernels/packed_gemm.h"
#include "kernels/simd.h"

#include <vector>

namespace dragoman::cpu {
namespace {

// From this many rows on (a prompt), the packed GEMM (packed_gemm.h) beats the engine's dot-product tiles;
// below it the tiles win. Best of 6 on the HY-MT1.5-1.8B projection shapes, 2 cores, GFLOP/s, tiles / packed
// / widened blocks through OpenBLAS: 8 rows 58 / 45 / 12, 16 rows 67 / 63 / 27, 40 rows 100 / 102 / 45,
// 96 rows 98 / 117 / 75, 200 rows 104 / 133 / 114 (the CPU's FMA peak: 178).
constexpr std::int64_t kPackedRows = 32;

bool eightBit(Dtype type) {
    return type == Dtype::I8 || type == Dtype::FP8;
}

kernels::WeightType weightType(Dtype type) {
    return type == Dtype::BF16 ? kernels::WeightType::BF16 : type == Dtype::I8 ? kernels::WeightType::I8 : kernels::WeightType::FP8;
}

void projectEightBit(const float* x, std::int64_t m, const Matrix& w, float* y, bool bf16Activations) {
    const auto n = w.rows, k = w.cols;
    if (w.type == Dtype::I8 && w.int8Activations)
        return kernels::int8ActivationMatmulTransposed(x, static_cast<const std::int8_t*>(w.data), y, m, n, k);
    // Float32 activations on AVX2 CPUs: the decoding steps' kernel at every row count, as float32 weights go
    // (rowStableAtAnyCount), so an encoder pass over several sources gives each the numbers it gets alone. The
    // packed kernel was 10-15 % faster from a few hundred rows on, but its sums depend on the row count.
    const bool packed = m >= kPackedRows && kernels::hasAvx2() && !rowStableAtAnyCount(w.type, bf16Activations);
    const auto type = weightType(w.type);
    // Prompts on AVX512-BF16 / AMX CPUs: oneDNN on panels widened to bf16 (exact), as bf16 weights go.
    if (packed && kernels::onednnBf16Ready() && kernels::onednnEightBitMatmulTransposed(x, w.data, type, y, m, n, k)) return;
    // Prompts of a model quantized from a bf16 one on AVX512-BF16 without AMX: its bf16 semantics, as its bf16
    // original's prompts (bf16_dot_gemm.h). Decoding steps (fewer rows) take the step kernels below.
    if (packed && bf16Activations && kernels::bf16DotProducts())
        return kernels::bf16DotEightBitMatmulTransposed(x, w.data, type, y, m, n, k);
    // 8-bit decoding steps of a model quantized from a bf16 one on AVX512-VBMI/VNNI CPUs (eight_bit_dot_steps.h): FP8
    // codes through byte tables onto the vdpbf16ps tiles (bf16 semantics), int8 codes against the rows' 24-bit
    // digit planes, where float32 activations fell behind the memory.
    if (!packed && bf16Activations && kernels::eightBitDotSteps())
        return kernels::eightBitDotStepsMatmulTransposed(x, w.data, type, y, m, n, k);
    if (w.type == Dtype::I8) {
        const auto* codes = static_cast<const std::int8_t*>(w.data);
        return packed ? kernels::i8PackedMatmulTransposed(x, codes, y, m, n, k) : kernels::i8MatmulTransposed(x, codes, y, m, n, k);
    }
    const auto* codes = static_cast<const std::uint8_t*>(w.data);
    packed ? kernels::fp8PackedMatmulTransposed(x, codes, y, m, n, k) : kernels::fp8MatmulTransposed(x, codes, y, m, n, k);
}

void projectBf16(const float* x, std::int64_t m, const Matrix& w, float* y, bool bf16Activations) {
    const auto n = w.rows, k = w.cols;
    const auto* weights = static_cast<const std::uint16_t*>(w.data);
    if (m >= kPackedRows && kernels::onednnBf16Ready()) {
        // AVX512-BF16 / AMX (onednn_matmul.h); a shape oneDNN has no fast code for falls back to the kernels below.
        if (!kernels::onednnBf16MatmulTransposed(x, weights, y, m, n, k)) kernels::bf16PackedMatmulTransposed(x, weights, y, m, n, k);
    } else if (bf16Activations && kernels::bf16DotProducts()) {
        // A bf16 model on AVX512-BF16 without AMX: bf16 activations at every row count (bf16_dot_gemm.h), so a
        // decoding step reads the weights with one instruction per 32 instead of widening each.
        kernels::bf16DotMatmulTransposed(x, weights, y, m, n, k);
    } else if (m >= kPackedRows && kernels::hasAvx2()) {
        kernels::bf16PackedMatmulTransposed(x, weights, y, m, n, k);
    } else {
        kernels::bf16MatmulTransposed(x, weights, y, m, n, k);
    }
}

}  // namespace

bool rowStableAtAnyCount(const Matrix& w, bool bf16Activations) {
    // Integer sums of each row's own codes, on every CPU.
    if (w.type == Dtype::I8 && w.int8Activations) return true;
    return rowStableAtAnyCount(w.type, bf16Activations);
}

bool rowStableAtAnyCount(Dtype type, bool bf16Activations) {
    if (!kernels::hasAvx2()) return false;
    if (type == Dtype::F32) return true;
    // 8-bit weights whose products keep float32 activations: a float32 model's copy, or a bf16 model's on a CPU
    // without bf16 dot products (whose prompts would otherwise go to oneDNN or the vdpbf16ps tiles).
    const bool bf16Products = bf16Activations && (kernels::bf16DotProducts() || kernels::onednnBf16Ready());
    return eightBit(type) && !bf16Products;
}

void project(const float* x, std::int64_t m, const Matrix& w, float* y, bool bf16Activations) {
    switch (w.type) {
        case Dtype::F32:
            return kernels::f32MatmulTransposed(x, static_cast<const float*>(w.data), y, m, w.rows, w.cols);
        case Dtype::BF16:
            return projectBf16(x, m, w, y, bf16Activations);
        case Dtype::I8:
        case Dtype::FP8:
            return projectEightBit(x, m, w, y, bf16Activations);
    }
}

bool projectRowTogether(const float* x, std::int64_t k, const Matrix* const* ws, float* const* ys, std::size_t count,
                        bool bf16Activations) {
    // One kernel family for all: bf16 dot products (bf16 activations), 8-bit codes on the step kernels
    // (eight_bit_dot_steps.h), or float32 activations.
    bool dotProducts = true, eightBitProducts = true, floatProducts = true;
    for (std::size_t i = 0; i < count; ++i) {
        const auto& w = *ws[i];
        if (w.int8Activations) return false;
        const bool bf16Dot = w.type == Dtype::BF16 && bf16Activations && kernels::bf16DotProducts();
        const bool eightBitDot = eightBit(w.type) && w.scale && bf16Activations && kernels::eightBitDotSteps();
        dotProducts = dotProducts && bf16Dot;
        eightBitProducts = eightBitProducts && eightBitDot;
        floatProducts = floatProducts && !bf16Dot && !eightBitDot;
        if (w.cols != k || w.type == Dtype::F32 || (w.type == Dtype::BF16 && w.scale) || (eightBit(w.type) && !w.scale)) return false;
    }
    if (!dotProducts && !eightBitProducts && !floatProducts) return false;
    std::vector<kernels::GemvOutput> targets;
    for (std::size_t i = 0; i < count; ++i)
        targets.push_back({ws[i]->data, weightType(ws[i]->type), ys[i], ws[i]->rows});
    if (dotProducts)
        kernels::bf16DotGemvMany(x, targets.data(), targets.size(), k);
    else if (eightBitProducts)
        kernels::eightBitDotStepsGemvMany(x, targets.data(), targets.size(), k);
    else
        kernels::gemvMany(x, targets.data(), targets.size(), k);
    return true;
}

}  // namespace dragoman::cpu
