#include "layers/linear.h"

#include "kernels/bf16.h"
#include "kernels/bf16_dot_gemm.h"
#include "kernels/bf16_matmul.h"
#include "kernels/channel_epilogue.h"
#include "kernels/eight_bit_dot_steps.h"
#include "kernels/onednn_matmul.h"
#include "kernels/packed_gemm.h"
#include "kernels/simd.h"
#include "kernels/threads.h"

#include <torch/torch.h>

#include <algorithm>

namespace dragoman {
namespace ops {
namespace {

// From this many rows on (a prompt), the packed GEMM (packed_gemm.h) beats the engine's dot-product tiles;
// below it the tiles win. Best of 6 on the HY-MT1.5-1.8B projection shapes, 2 cores, GFLOP/s, tiles / packed
// / widened blocks through OpenBLAS: 8 rows 58 / 45 / 12, 16 rows 67 / 63 / 27, 40 rows 100 / 102 / 45,
// 96 rows 98 / 117 / 75, 200 rows 104 / 133 / 114 (the CPU's FMA peak: 178).
constexpr std::int64_t kPackedRows = 32;
// Without AVX2 (no packed kernel), long prompts widen blocks of the weights into a cache-sized float32 buffer
// for OpenBLAS's GEMM; nothing is kept, the checkpoint stays bf16.
constexpr std::int64_t kGemmRows = 96;
constexpr std::int64_t kBlockRows = 1024;

torch::Tensor widenedBlocksProduct(const torch::Tensor& rows, const torch::Tensor& weight) {
    const auto n = weight.size(0), k = weight.size(1);
    auto y = torch::empty({rows.size(0), n}, torch::kFloat32);
    auto block = torch::empty({std::min(n, kBlockRows), k}, torch::kFloat32);
    ParallelBlas blas(rows.size(0) * std::min(n, kBlockRows) * k);
    const auto* w = reinterpret_cast<const std::uint16_t*>(weight.data_ptr());
    for (std::int64_t r = 0; r < n; r += kBlockRows) {
        const auto count = std::min(kBlockRows, n - r);
        auto part = block.narrow(0, 0, count);
        kernels::widenBf16(w + r * k, part.data_ptr<float>(), count * k);
        y.narrow(1, r, count).copy_(torch::mm(rows, part.t()));
    }
    return y;
}

// y [..., n] (a fresh product) += bias, in place where y is a float32 CPU tensor: one pass on the kernel threads
// (kernels/channel_epilogue.h) instead of an ATen call and a new tensor per projection.
void addBias(torch::Tensor& y, const torch::Tensor& bias) {
    if (!bias.defined()) return;
    const auto b = bias.scalar_type() == torch::kFloat32 && bias.is_contiguous() ? bias : bias.to(torch::kFloat32).contiguous();
    if (!y.device().is_cpu() || y.scalar_type() != torch::kFloat32 || !y.is_contiguous()) {
        y = y + b;
        return;
    }
    const auto n = y.size(-1);
    kernels::ChannelEpilogue epilogue;
    epilogue.bias = b.data_ptr<float>();
    kernels::scaleAndBiasRows(y.data_ptr<float>(), y.numel() / n, n, epilogue);
}

torch::Tensor withRowsOf(const torch::Tensor& x, const torch::Tensor& y, std::int64_t n) {
    auto sizes = x.sizes().vec();
    sizes.back() = n;
    return y.view(sizes);
}

}  // namespace

torch::Tensor smallRowsLinear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
    const auto k = weight.size(1), n = weight.size(0);
    const auto rows = x.reshape({-1, k}).contiguous();
    auto y = torch::empty({rows.size(0), n}, torch::kFloat32);
    kernels::f32MatmulTransposed(rows.data_ptr<float>(), weight.data_ptr<float>(), y.data_ptr<float>(), rows.size(0), n, k);
    addBias(y, bias);
    return withRowsOf(x, y, n);
}

bool rowStableAtAnyCount(const torch::Tensor& weight, bool bf16Activations) {
    if (!kernels::hasAvx2() || !weight.is_contiguous()) return false;
    const auto type = weight.scalar_type();
    if (type == torch::kFloat32) return true;
    // 8-bit weights whose products keep float32 activations: a float32 model's copy, or a bf16 model's on a CPU
    // without bf16 dot products (whose prompts would otherwise go to oneDNN or the vdpbf16ps tiles).
    const bool bf16Products = bf16Activations && (kernels::bf16DotProducts() || kernels::onednnBf16Ready());
    return (type == torch::kInt8 || type == torch::kUInt8) && !bf16Products;
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias, bool bf16Activations) {
    if (weight.scalar_type() != torch::kFloat32) {
        auto y = project(x, weight, bf16Activations);
        addBias(y, bias);
        return y;
    }
    const bool tracked = torch::GradMode::is_enabled() && (weight.requires_grad() || x.requires_grad());
    // With AVX2 every row count takes the engine's kernel, whose sums do not depend on the other rows: a source
    // encoded with others (StepBatcher::together) gets the numbers it gets alone. OpenBLAS was ~20 % faster on
    // hundreds of rows, but its order changes with the row count.
    const bool kernel = x.numel() <= kSmallRows * x.size(-1) ? weight.is_contiguous() : rowStableAtAnyCount(weight);
    if (!tracked && kernel && x.scalar_type() == torch::kFloat32) return smallRowsLinear(x, weight, bias);
    ParallelBlas blas(x.numel() * weight.size(0));
    return torch::nn::functional::linear(x, weight, bias);
}

torch::Tensor project(const torch::Tensor& x, const torch::Tensor& weight, bool bf16Activations) {
    const auto type = weight.scalar_type();
    if (type == torch::kFloat32) return ops::linear(x, weight);
    const bool ours = type == torch::kBFloat16 || type == torch::kInt8 || type == torch::kUInt8;
    if (!ours || !weight.is_contiguous() || x.scalar_type() != torch::kFloat32) {
        ParallelBlas blas(x.numel() * weight.size(0));
        return torch::matmul(x, floatWeight(weight).t());  // other dtypes: a widened copy per call (rare)
    }
    const auto k = weight.size(1), n = weight.size(0);
    const auto rows = x.reshape({-1, k}).contiguous();
    const auto m = rows.size(0);
    const float* xp = rows.data_ptr<float>();
    if (type != torch::kBFloat16) {
        // 8-bit weights: the raw products (Linear applies the scale).
        if (m >= kPackedRows && !kernels::hasAvx2()) {
            ParallelBlas blas(x.numel() * n);
            return withRowsOf(x, torch::mm(rows, floatWeight(weight).t()), n);
        }
        auto y = torch::empty({m, n}, torch::kFloat32);
        // Float32 activations on AVX2 CPUs: the decoding steps' kernel at every row count, as float32 weights go
        // (rowStableAtAnyCount), so an encoder pass over several sources gives each the numbers it gets alone. The
        // packed kernel was 10-15 % faster from a few hundred rows on, but its sums depend on the row count.
        const bool packed = m >= kPackedRows && !rowStableAtAnyCount(weight, bf16Activations);
        // Prompts on AVX512-BF16 / AMX CPUs: oneDNN on panels widened to bf16 (exact), as bf16 weights go.
        const auto eightBit = type == torch::kInt8 ? kernels::WeightType::I8 : kernels::WeightType::FP8;
        if (packed && kernels::onednnBf16Ready() &&
            kernels::onednnEightBitMatmulTransposed(xp, weight.data_ptr(), eightBit, y.data_ptr<float>(), m, n, k))
            return withRowsOf(x, y, n);
        // Prompts of a model quantized from a bf16 one on AVX512-BF16 without AMX: its bf16 semantics, as its bf16
        // original's prompts (bf16_dot_gemm.h). Decoding steps (fewer rows) take the step kernels below.
        if (packed && bf16Activations && kernels::bf16DotProducts()) {
            kernels::bf16DotEightBitMatmulTransposed(xp, weight.data_ptr(), eightBit, y.data_ptr<float>(), m, n, k);
            return withRowsOf(x, y, n);
        }
        // 8-bit decoding steps of a model quantized from a bf16 one on AVX512-VBMI/VNNI CPUs (eight_bit_dot_steps.h): FP8
        // codes through byte tables onto the vdpbf16ps tiles (bf16 semantics), int8 codes against the rows' 24-bit
        // digit planes, where float32 activations fell behind the memory.
        if (!packed && bf16Activations && kernels::eightBitDotSteps()) {
            kernels::eightBitDotStepsMatmulTransposed(xp, weight.data_ptr(), eightBit, y.data_ptr<float>(), m, n, k);
            return withRowsOf(x, y, n);
        }
        if (type == torch::kInt8) {
            const auto* w = weight.data_ptr<std::int8_t>();
            packed ? kernels::i8PackedMatmulTransposed(xp, w, y.data_ptr<float>(), m, n, k)
                   : kernels::i8MatmulTransposed(xp, w, y.data_ptr<float>(), m, n, k);
        } else {
            const auto* w = weight.data_ptr<std::uint8_t>();
            packed ? kernels::fp8PackedMatmulTransposed(xp, w, y.data_ptr<float>(), m, n, k)
                   : kernels::fp8MatmulTransposed(xp, w, y.data_ptr<float>(), m, n, k);
        }
        return withRowsOf(x, y, n);
    }
    torch::Tensor y;
    const auto* w = reinterpret_cast<const std::uint16_t*>(weight.data_ptr());
    if (m >= kPackedRows && kernels::onednnBf16Ready()) {
        // AVX512-BF16 / AMX (onednn_matmul.h); a shape oneDNN has no fast code for falls back to the kernels below.
        y = torch::empty({m, n}, torch::kFloat32);
        if (!kernels::onednnBf16MatmulTransposed(xp, w, y.data_ptr<float>(), m, n, k))
            kernels::bf16PackedMatmulTransposed(xp, w, y.data_ptr<float>(), m, n, k);
    } else if (bf16Activations && kernels::bf16DotProducts()) {
        // A bf16 model on AVX512-BF16 without AMX: bf16 activations at every row count (bf16_dot_gemm.h), so a
        // decoding step reads the weights with one instruction per 32 instead of widening each.
        y = torch::empty({m, n}, torch::kFloat32);
        kernels::bf16DotMatmulTransposed(xp, w, y.data_ptr<float>(), m, n, k);
    } else if (m >= kPackedRows && kernels::hasAvx2()) {
        y = torch::empty({m, n}, torch::kFloat32);
        kernels::bf16PackedMatmulTransposed(xp, w, y.data_ptr<float>(), m, n, k);
    } else if (m >= kGemmRows) {
        y = widenedBlocksProduct(rows, weight);
    } else {
        y = torch::empty({m, n}, torch::kFloat32);
        kernels::bf16MatmulTransposed(xp, w, y.data_ptr<float>(), m, n, k);
    }
    return withRowsOf(x, y, n);
}

torch::Tensor floatWeight(const torch::Tensor& weight) {
    if (weight.scalar_type() != torch::kUInt8) return weight.to(torch::kFloat32);  // no copy for float32 weights
    // Float8 E4M3 codes (io/tensor_view.h binds them as bytes): through a 256-entry table, on the weight's device.
    static const torch::Tensor table = [] {
        auto t = torch::empty({256}, torch::kFloat32);
        for (int code = 0; code < 256; ++code)
            t[code] = kernels::widen(kernels::Fp8E4M3{static_cast<std::uint8_t>(code)});
        return t;
    }();
    return table.to(weight.device()).index_select(0, weight.reshape({-1}).to(torch::kInt64)).view(weight.sizes());
}

torch::Tensor libtorchProject(const torch::Tensor& x, const torch::Tensor& weight) {
    ParallelBlas blas(x.numel() * weight.size(0));
    return torch::matmul(x, floatWeight(weight).t());
}

}  // namespace ops

Linear::Linear(WeightBinder& weights, const std::string& prefix, std::int64_t out, std::int64_t in, bool bias, Placement placement)
    : weight_(weights.take(prefix + "weight", {out, in})), placement_(placement), name_(prefix.substr(0, prefix.size() - 1)) {
    if (auto scale = weights.takeScale(prefix + "weight", weight_, out); scale.defined()) scale_ = scale.to(torch::kFloat32).reshape({-1});
    // A static activation scale only matters where activations are quantized; they stay float32 here.
    weights.ignore(prefix + "input_scale");
    if (bias) bias_ = weights.take(prefix + "bias", {out});
    widenBiasOfEightBit();
}

void Linear::widenBiasOfEightBit() {
    // An 8-bit layer's output is float32 and gets its bias in scaled()'s one pass; a bf16 bias (the bundled model's)
    // widened once here (exact) instead of on every call.
    if (scale_.defined() && bias_.defined() && bias_.is_floating_point()) bias_ = bias_.to(torch::kFloat32);
}

torch::Tensor Linear::scaled(torch::Tensor y, bool withBias) const {
    const auto& bias = withBias ? bias_ : torch::Tensor();
    if (!scale_.defined() && !bias.defined()) return y;
    const auto n = weight_.size(0);
    const bool inPlace = y.device().is_cpu() && y.scalar_type() == torch::kFloat32 && y.is_contiguous() && y.size(-1) == n &&
                         (!scale_.defined() || (scale_.scalar_type() == torch::kFloat32 && scale_.is_contiguous())) &&
                         (!bias.defined() || (bias.scalar_type() == torch::kFloat32 && bias.is_contiguous() && bias.numel() == n));
    if (!inPlace) {
        if (scale_.defined()) y.mul_(scale_);
        return bias.defined() ? y + bias.to(torch::kFloat32) : y;
    }
    kernels::ChannelEpilogue epilogue;
    if (scale_.defined()) {
        epilogue.scale = scale_.data_ptr<float>();
        epilogue.scalePerTensor = scale_.numel() == 1;
    }
    if (bias.defined()) epilogue.bias = bias.data_ptr<float>();
    kernels::scaleAndBiasRows(y.data_ptr<float>(), y.numel() / n, n, epilogue);
    return y;
}

Linear::Linear(torch::Tensor weight, torch::Tensor bias, torch::Tensor scale, Placement placement)
    : weight_(std::move(weight)), bias_(std::move(bias)), scale_(std::move(scale)), placement_(placement) {
    widenBiasOfEightBit();
}

torch::Tensor Linear::withDelta(torch::Tensor y, const torch::Tensor& x, const LoraSet* lora) const {
    const auto* d = lora ? lora->at(slot_) : nullptr;
    if (!d) return y;
    // scale * B (A x): two thin products (r is 4-64), never the merged [out, in] matrix.
    auto ax = placement_.onCpuKernels() ? ops::project(x, d->a) : ops::libtorchProject(x, d->a);
    auto bax = placement_.onCpuKernels() ? ops::project(ax, d->b) : ops::libtorchProject(ax, d->b);
    return y.add_(bax, d->scale);
}

bool Linear::rowStable(const LoraSet* lora) const {
    const auto* d = lora ? lora->at(slot_) : nullptr;
    return placement_.onCpuKernels() && ops::rowStableAtAnyCount(weight_, placement_.bf16Activations) &&
           (!d || (ops::rowStableAtAnyCount(d->a) && ops::rowStableAtAnyCount(d->b)));
}

torch::Tensor Linear::operator()(const torch::Tensor& x, const LoraSet* lora) const {
    if (placement_.onCpuKernels()) {
        if (!scale_.defined()) return withDelta(ops::linear(x, weight_, bias_, placement_.bf16Activations), x, lora);
        return withDelta(scaled(ops::project(x, weight_, placement_.bf16Activations), true), x, lora);
    }
    return withDelta(scaled(ops::libtorchProject(x, weight_), true), x, lora);
}

torch::Tensor Linear::operator()(const torch::Tensor& x, const std::vector<const LoraSet*>& adapters) const {
    const LoraSet* first = adapters.empty() ? nullptr : adapters.front();
    if (std::all_of(adapters.begin(), adapters.end(), [first](const LoraSet* a) { return a == first; })) return (*this)(x, first);
    auto y = (*this)(x, nullptr);
    std::vector<const LoraSet*> done;
    for (const auto* adapter : adapters) {
        if (!adapter || std::find(done.begin(), done.end(), adapter) != done.end()) continue;
        done.push_back(adapter);
        std::vector<std::int64_t> rows;
        for (std::size_t i = 0; i < adapters.size(); ++i)
            if (adapters[i] == adapter) rows.push_back(static_cast<std::int64_t>(i));
        const auto index = torch::tensor(rows, torch::kInt64).to(y.device());
        y.index_copy_(0, index, withDelta(y.index_select(0, index), x.index_select(0, index), adapter));
    }
    return y;
}

std::vector<torch::Tensor> Linear::many(const torch::Tensor& x, const std::vector<const Linear*>& layers, const LoraSet* lora) {
    const auto k = x.size(-1);
    bool fused = x.numel() == k && x.scalar_type() == torch::kFloat32;
    // One kernel family per call: bf16 dot products (bf16 activations) for all, 8-bit codes on the step kernels
    // (eight_bit_dot_steps.h) for all, or float32 activations for all.
    bool dotProducts = true, eightBitProducts = true, floatProducts = true;
    for (const auto* l : layers) {
        const auto& w = l->weight_;
        const auto type = w.scalar_type();
        const bool eightBit = (type == torch::kInt8 || type == torch::kUInt8) && l->scale_.defined();
        const bool bf16Dot = type == torch::kBFloat16 && l->placement_.bf16Activations && kernels::bf16DotProducts();
        const bool eightBitDot = eightBit && l->placement_.bf16Activations && kernels::eightBitDotSteps();
        dotProducts = dotProducts && bf16Dot;
        eightBitProducts = eightBitProducts && eightBitDot;
        floatProducts = floatProducts && !bf16Dot && !eightBitDot;
        fused = fused && l->placement_.onCpuKernels() && !l->bias_.defined() && (type == torch::kBFloat16 || eightBit) &&
                (eightBit || !l->scale_.defined()) && w.is_contiguous() && w.size(1) == k;
    }
    fused = fused && (dotProducts || eightBitProducts || floatProducts);
    std::vector<torch::Tensor> out;
    if (!fused) {
        for (const auto* l : layers)
            out.push_back((*l)(x, lora));
        return out;
    }
    const auto row = x.reshape({k}).contiguous();
    std::vector<kernels::GemvOutput> targets;
    for (const auto* l : layers) {
        out.push_back(torch::empty(l->weight_.size(0), torch::kFloat32));
        const auto type = l->weight_.scalar_type() == torch::kBFloat16 ? kernels::WeightType::BF16
                          : l->weight_.scalar_type() == torch::kInt8   ? kernels::WeightType::I8
                                                                       : kernels::WeightType::FP8;
        targets.push_back({l->weight_.data_ptr(), type, out.back().data_ptr<float>(), l->weight_.size(0)});
    }
    if (dotProducts)
        kernels::bf16DotGemvMany(row.data_ptr<float>(), targets.data(), targets.size(), k);
    else if (eightBitProducts)
        kernels::eightBitDotStepsGemvMany(row.data_ptr<float>(), targets.data(), targets.size(), k);
    else
        kernels::gemvMany(row.data_ptr<float>(), targets.data(), targets.size(), k);
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = layers[i]->withDelta(layers[i]->scaled(ops::withRowsOf(x, out[i], layers[i]->weight_.size(0)), false), x, lora);
    return out;
}

void numberSlots(const std::vector<const Linear*>& linears) {
    int slot = 0;
    for (const auto* linear : linears)
        const_cast<Linear*>(linear)->setSlot(slot++);
}

std::int64_t Linear::bytes() const {
    return static_cast<std::int64_t>(weight_.nbytes() + (bias_.defined() ? bias_.nbytes() : 0) + (scale_.defined() ? scale_.nbytes() : 0));
}

void Linear::place(Placement placement) {
    placement_ = placement;
    if (placement.device.is_cpu()) return;
    weight_ = weight_.to(placement.device);
    if (bias_.defined()) bias_ = bias_.to(placement.device);
    if (scale_.defined()) scale_ = scale_.to(placement.device);
}

}  // namespace dragoman
