#include "layers/linear.h"

#include "cpu/projection.h"
#include "kernels/bf16.h"
#include "kernels/bf16_dot_gemm.h"
#include "kernels/bf16_matmul.h"
#include "kernels/channel_epilogue.h"
#include "kernels/int8_activation_gemm.h"
#include "kernels/int8_panels.h"
#include "kernels/onednn_matmul.h"
#include "kernels/simd.h"
#include "kernels/threads.h"
#include "layers/torch_device.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <mutex>
#include <optional>

namespace dragoman {

struct KeptPanels {
    std::once_flag made;
    std::unique_ptr<kernels::Int8Panels> panels;
};
namespace ops {
namespace {

// Products with this many rows go through cpu::project's packed kernels on AVX2 CPUs.
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

cpu::Dtype cpuDtype(torch::ScalarType type) {
    // Float8 E4M3 codes are bound as bytes (io/tensor_view.h).
    return type == torch::kFloat32    ? cpu::Dtype::F32
           : type == torch::kBFloat16 ? cpu::Dtype::BF16
           : type == torch::kInt8     ? cpu::Dtype::I8
                                      : cpu::Dtype::FP8;
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
    const auto type = weight.scalar_type();
    if (!weight.is_contiguous() || (type != torch::kFloat32 && type != torch::kInt8 && type != torch::kUInt8)) return false;
    return cpu::rowStableAtAnyCount(cpuDtype(type), bf16Activations);
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
    // Long prompts on CPUs without AVX2 (no packed kernels): OpenBLAS on widened weights. 8-bit weights: the raw
    // products (Linear applies the scale).
    if (!kernels::hasAvx2() && type != torch::kBFloat16 && m >= kPackedRows) {
        ParallelBlas blas(x.numel() * n);
        return withRowsOf(x, torch::mm(rows, floatWeight(weight).t()), n);
    }
    const bool bf16Kernels = kernels::onednnBf16Ready() || (bf16Activations && kernels::bf16DotProducts());
    if (!kernels::hasAvx2() && type == torch::kBFloat16 && m >= kGemmRows && !bf16Kernels)
        return withRowsOf(x, widenedBlocksProduct(rows, weight), n);
    auto y = torch::empty({m, n}, torch::kFloat32);
    cpu::project(rows.data_ptr<float>(), m, matrixOf(weight), y.data_ptr<float>(), bf16Activations);
    return withRowsOf(x, y, n);
}

cpu::Matrix matrixOf(const torch::Tensor& weight, const torch::Tensor& scale) {
    TORCH_CHECK(weight.device().is_cpu() && weight.is_contiguous() && weight.dim() == 2, "matrixOf: a contiguous CPU matrix");
    const auto type = weight.scalar_type();
    TORCH_CHECK(type == torch::kFloat32 || type == torch::kBFloat16 || type == torch::kInt8 || type == torch::kUInt8,
                "matrixOf: float32, bfloat16, int8 or float8 E4M3 codes");
    TORCH_CHECK(!scale.defined() || (scale.scalar_type() == torch::kFloat32 && scale.is_contiguous() && scale.device().is_cpu()),
                "matrixOf: a float32 scale");
    cpu::Matrix m;
    m.data = weight.data_ptr();
    m.type = cpuDtype(type);
    m.rows = weight.size(0);
    m.cols = weight.size(1);
    if (scale.defined()) {
        m.scale = scale.data_ptr<float>();
        m.scalePerTensor = scale.numel() == 1;
    }
    return m;
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

torch::Tensor projectInt8Activations(const torch::Tensor& x, const torch::Tensor& weight, const kernels::Int8Panels* panels,
                                     const kernels::ChannelEpilogue* epilogue) {
    const auto k = weight.size(1), n = weight.size(0);
    const auto rows = x.reshape({-1, k}).to(torch::kFloat32).contiguous();
    auto y = torch::empty({rows.size(0), n}, torch::kFloat32);
    kernels::int8ActivationMatmulTransposed(rows.data_ptr<float>(), weight.data_ptr<std::int8_t>(), y.data_ptr<float>(), rows.size(0), n, k,
                                            panels, epilogue);
    return withRowsOf(x, y, n);
}

torch::Tensor fakeQuantizedPerToken(const torch::Tensor& x) {
    // compressed-tensors' dynamic "token" strategy: scale = max|x| / 127.5 (at least float32's epsilon), codes
    // round(x / scale) (half to even) clamped to [-128, 127], then back to values.
    const auto rows = x.to(torch::kFloat32);
    const auto largest = rows.abs().amax(-1, true);
    const auto scale = (largest / 127.5).clamp_min(std::numeric_limits<float>::epsilon());
    return (rows / scale).round().clamp(-128, 127) * scale;
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

std::optional<kernels::ChannelEpilogue> Linear::channelEpilogue(bool withBias) const {
    const auto& bias = withBias ? bias_ : torch::Tensor();
    const auto n = weight_.size(0);
    const bool usable =
        (!scale_.defined() || (scale_.device().is_cpu() && scale_.scalar_type() == torch::kFloat32 && scale_.is_contiguous())) &&
        (!bias.defined() || (bias.device().is_cpu() && bias.scalar_type() == torch::kFloat32 && bias.is_contiguous() && bias.numel() == n));
    if (!usable) return std::nullopt;
    kernels::ChannelEpilogue epilogue;
    if (scale_.defined()) {
        epilogue.scale = scale_.data_ptr<float>();
        epilogue.scalePerTensor = scale_.numel() == 1;
    }
    if (bias.defined()) epilogue.bias = bias.data_ptr<float>();
    return epilogue;
}

torch::Tensor Linear::scaled(torch::Tensor y, bool withBias) const {
    const auto& bias = withBias ? bias_ : torch::Tensor();
    if (!scale_.defined() && !bias.defined()) return y;
    const auto n = weight_.size(0);
    const auto epilogue = channelEpilogue(withBias);
    if (!epilogue || !y.device().is_cpu() || y.scalar_type() != torch::kFloat32 || !y.is_contiguous() || y.size(-1) != n) {
        if (scale_.defined()) y.mul_(scale_);
        return bias.defined() ? y + bias.to(torch::kFloat32) : y;
    }
    kernels::scaleAndBiasRows(y.data_ptr<float>(), y.numel() / n, n, *epilogue);
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
    const bool ownRows = int8Activations() || ops::rowStableAtAnyCount(weight_, placement_.bf16Activations);
    return placement_.onCpuKernels() && ownRows && (!d || (ops::rowStableAtAnyCount(d->a) && ops::rowStableAtAnyCount(d->b)));
}

bool Linear::int8Activations() const {
    return placement_.int8Activations && weight_.scalar_type() == torch::kInt8;
}

void Linear::keepPanels() {
    if (int8Activations() && placement_.onCpuKernels() && kernels::panelProductsAvailable() && weight_.is_contiguous() && !panels_)
        panels_ = std::make_shared<KeptPanels>();
}

const kernels::Int8Panels* Linear::panelsFor() const {
    if (!panels_) return nullptr;
    std::call_once(panels_->made, [&] {
        panels_->panels = std::make_unique<kernels::Int8Panels>(weight_.data_ptr<std::int8_t>(), weight_.size(0), weight_.size(1));
    });
    return panels_->panels.get();
}

torch::Tensor Linear::operator()(const torch::Tensor& x, const LoraSet* lora) const {
    if (int8Activations()) {
        // The adapter's delta (kept in floating point) reads the rows as they are, as PEFT's LoRA layer does.
        if (!placement_.onCpuKernels())
            return withDelta(scaled(ops::libtorchProject(ops::fakeQuantizedPerToken(x), weight_), true), x, lora);
        const auto* panels = panelsFor();
        // The scale and bias applied as the products are stored, where the kernel can (one pass less).
        if (const auto epilogue = channelEpilogue(true))
            return withDelta(ops::projectInt8Activations(x, weight_, panels, &*epilogue), x, lora);
        return withDelta(scaled(ops::projectInt8Activations(x, weight_, panels), true), x, lora);
    }
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

std::vector<torch::Tensor> Linear::many(const torch::Tensor& x, const std::vector<const Linear*>& layers,
                                        const std::vector<const LoraSet*>& adapters) {
    const LoraSet* first = adapters.empty() ? nullptr : adapters.front();
    if (std::all_of(adapters.begin(), adapters.end(), [first](const LoraSet* a) { return a == first; })) return many(x, layers, first);
    std::vector<torch::Tensor> out;
    for (const auto* layer : layers)
        out.push_back((*layer)(x, adapters));
    return out;
}

std::vector<torch::Tensor> Linear::manyInt8Activations(const torch::Tensor& x, const std::vector<const Linear*>& layers,
                                                       const LoraSet* lora) {
    const auto k = x.size(-1);
    std::vector<std::optional<kernels::ChannelEpilogue>> epilogues;
    for (const auto* l : layers) {
        if (!l->int8Activations() || !l->placement_.onCpuKernels() || !l->weight_.is_contiguous() || l->weight_.size(1) != k) return {};
        epilogues.push_back(l->channelEpilogue(true));
        if (!epilogues.back()) return {};
    }
    const auto rows = x.reshape({-1, k}).to(torch::kFloat32).contiguous();
    const auto m = rows.size(0);
    std::vector<torch::Tensor> out;
    std::vector<kernels::Int8Product> products;
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const auto* l = layers[i];
        out.push_back(torch::empty({m, l->weight_.size(0)}, torch::kFloat32));
        products.push_back(
            {l->weight_.data_ptr<std::int8_t>(), l->weight_.size(0), out.back().data_ptr<float>(), l->panelsFor(), &*epilogues[i]});
    }
    kernels::int8ActivationProducts(rows.data_ptr<float>(), m, k, products.data(), products.size());
    for (std::size_t i = 0; i < layers.size(); ++i)
        out[i] = layers[i]->withDelta(ops::withRowsOf(x, out[i], layers[i]->weight_.size(0)), x, lora);
    return out;
}

std::vector<torch::Tensor> Linear::many(const torch::Tensor& x, const std::vector<const Linear*>& layers, const LoraSet* lora) {
    if (auto together = manyInt8Activations(x, layers, lora); !together.empty()) return together;
    const auto k = x.size(-1);
    bool fused = x.numel() == k && x.scalar_type() == torch::kFloat32;
    for (const auto* l : layers) {
        const auto type = l->weight_.scalar_type();
        const bool readable = type == torch::kBFloat16 || type == torch::kInt8 || type == torch::kUInt8;  // what the fused kernels read
        fused = fused && readable && !l->int8Activations() && l->placement_.onCpuKernels() && !l->bias_.defined() &&
                l->weight_.is_contiguous() && l->weight_.size(1) == k &&
                l->placement_.bf16Activations == layers.front()->placement_.bf16Activations;
    }
    std::vector<torch::Tensor> out;
    if (fused) {
        const auto row = x.reshape({k}).contiguous();
        std::vector<cpu::Matrix> matrices;
        std::vector<const cpu::Matrix*> ws;
        std::vector<float*> ys;
        for (const auto* l : layers) {
            matrices.push_back(l->matrix());
            out.push_back(torch::empty(l->weight_.size(0), torch::kFloat32));
            ys.push_back(out.back().data_ptr<float>());
        }
        for (const auto& m : matrices)
            ws.push_back(&m);
        fused =
            cpu::projectRowTogether(row.data_ptr<float>(), k, ws.data(), ys.data(), ws.size(), layers.front()->placement_.bf16Activations);
    }
    if (!fused) {
        out.clear();
        for (const auto* l : layers)
            out.push_back((*l)(x, lora));
        return out;
    }
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = layers[i]->withDelta(layers[i]->scaled(ops::withRowsOf(x, out[i], layers[i]->weight_.size(0)), false), x, lora);
    return out;
}

void numberSlots(const std::vector<const Linear*>& linears) {
    int slot = 0;
    for (const auto* linear : linears)
        const_cast<Linear*>(linear)->setSlot(slot++);
}

void keepPanelsOfSmallModel(const std::vector<const Linear*>& linears) {
    constexpr std::int64_t kBudget = std::int64_t{512} << 20;
    std::int64_t total = 0;
    for (const auto* linear : linears)
        total += linear->int8Activations() ? linear->weight().nbytes() : 0;
    if (total == 0 || total > kBudget) return;
    for (const auto* linear : linears)
        const_cast<Linear*>(linear)->keepPanels();
}

std::vector<LinearModule> modulesOf(const std::vector<const Linear*>& linears) {
    std::vector<LinearModule> modules;
    for (const auto* linear : linears)
        modules.push_back({linear->name(), linear->out(), linear->in(), linear->slot()});
    return modules;
}

cpu::Matrix Linear::matrix() const {
    auto m = ops::matrixOf(weight_, scale_);
    m.int8Activations = int8Activations();
    return m;
}

std::int64_t Linear::bytes() const {
    return static_cast<std::int64_t>(weight_.nbytes() + (bias_.defined() ? bias_.nbytes() : 0) + (scale_.defined() ? scale_.nbytes() : 0));
}

void Linear::place(Placement placement) {
    placement_ = placement;
    if (!placement.onCpuKernels()) panels_.reset();
    if (placement.onCpu()) return;
    const auto device = torchDevice(placement);
    weight_ = weight_.to(device);
    if (bias_.defined()) bias_ = bias_.to(device);
    if (scale_.defined()) scale_ = scale_.to(device);
}

}  // namespace dragoman
