#pragma once
// A linear layer y = (x W^T) * s + b over a checkpoint's weight as mapped, with an optional per-output-channel
// (or per-tensor) scale s: the weight-only quantized layout of compressed-tensors (`weight` I8 or F8_E4M3,
// `weight_scale` [out, 1], [1] or []). Where the arithmetic runs is decided here and nowhere else: on the CPU
// the engine's kernels read float32, bfloat16, int8 and E4M3 weights in place (widened in registers, float32
// accumulation, the scale applied to the sums; kernels/), other dtypes are widened per call; elsewhere (a CUDA
// device, or the CPU with Placement::libtorchOps) libtorch's float32 matmul over a widened copy per call.
// Architectures only compose layers.
#include "cpu/matrix.h"
#include "cpu/projection.h"
#include "kernels/channel_epilogue.h"
#include "layers/lora.h"
#include "layers/placement.h"
#include "layers/weights.h"
#include "models/linear_module.h"

#include <torch/types.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace dragoman {
namespace kernels {
class Int8Panels;
}
struct KeptPanels;

class Linear {
public:
    Linear() = default;
    // Binds `prefix`weight [out, in], `prefix`weight_scale [out, 1], [1] or [] where the checkpoint has one
    // (required for 8-bit weights), and, with `bias`, `prefix`bias [out] (checked by the binder).
    Linear(WeightBinder& weights, const std::string& prefix, std::int64_t out, std::int64_t in, bool bias, Placement placement = {});
    // A weight the caller already holds (a tied output layer: the embeddings, with an 8-bit table's float32
    // scales [out] or [1]).
    Linear(torch::Tensor weight, torch::Tensor bias, torch::Tensor scale = {}, Placement placement = {});

    // x [..., in] float32 -> [..., out] float32, plus the delta `lora` (the request's adapter, may be null)
    // holds for this layer's slot.
    torch::Tensor operator()(const torch::Tensor& x, const LoraSet* lora = nullptr) const;
    // Rows of a batch of requests, row i with adapters[i] (null: none): the base product once for all rows,
    // then each adapter's delta on its rows. Row i equals (*this)(x[i], adapters[i]) exactly.
    torch::Tensor operator()(const torch::Tensor& x, const std::vector<const LoraSet*>& adapters) const;
    // Whether each output row depends on its own input row alone, bit for bit, whatever rows come with it (with
    // `lora`'s delta, may be null): float32 weights, or 8-bit ones with float32 activations, on the CPU kernels of
    // an AVX2 CPU. Rows of several requests may then share one product.
    bool rowStable(const LoraSet* lora = nullptr) const;
    // The same x through several layers sharing `in`: one decoding row by bf16 weights is one kernel pass; W8A8 layers'
    // rows are quantized once for all of them, their products shared out in one call.
    static std::vector<torch::Tensor> many(const torch::Tensor& x, const std::vector<const Linear*>& layers, const LoraSet* lora = nullptr);
    // The same with row i's adapter adapters[i]: many() where every row has the same one, else each layer alone.
    static std::vector<torch::Tensor> many(const torch::Tensor& x, const std::vector<const Linear*>& layers,
                                           const std::vector<const LoraSet*>& adapters);

    // The module's name in the checkpoint ("model.layers.0.self_attn.q_proj"), empty for a tied output layer.
    const std::string& name() const { return name_; }
    // Its index among the model's Linears, which adapters are bound by (-1: not adaptable).
    int slot() const { return slot_; }
    void setSlot(int slot) { slot_ = slot; }
    std::int64_t in() const { return weight_.size(1); }
    std::int64_t out() const { return weight_.size(0); }

    const torch::Tensor& weight() const { return weight_; }
    const torch::Tensor& bias() const { return bias_; }
    const torch::Tensor& scale() const { return scale_; }  // float32 [out] or [1]; undefined: none
    // The weight and scale as the CPU kernels read them (cpu/matrix.h): for a CPU layer without a bias, contiguous.
    cpu::Matrix matrix() const;
    // int8 weights whose activation rows are quantized per token first (Placement::int8Activations).
    bool int8Activations() const;
    // For a W8A8 layer on the CPU kernels: its weights are also laid out in panels (kernels/int8_panels.h), once, by the
    // first product of many rows, so that batched steps do not lay them out per call. A second copy of the weights:
    // for models whose size allows it (the model decides).
    void keepPanels();
    std::int64_t bytes() const;  // read per use (decoding-bandwidth reports)
    // Moves the tensors to `placement`'s device once (in the checkpoint's dtype).
    void place(Placement placement);

private:
    torch::Tensor withDelta(torch::Tensor y, const torch::Tensor& x, const LoraSet* lora) const;

    // y (the raw products) times the per-channel scale, plus the bias where `withBias`: in place and in one pass
    // (kernels/channel_epilogue.h) for a float32 CPU tensor, through libtorch otherwise.
    torch::Tensor scaled(torch::Tensor y, bool withBias) const;
    // The scale and (with `withBias`) the bias as the CPU kernels apply them; none where they are not float32 CPU
    // tensors laid out as the kernels read them.
    std::optional<kernels::ChannelEpilogue> channelEpilogue(bool withBias) const;
    void widenBiasOfEightBit();

    // The panels kept (keepPanels), made on first use; every row count reads them (kernels/int8_activation_gemm.h).
    const kernels::Int8Panels* panelsFor() const;
    // many() for W8A8 layers on the CPU kernels; empty where they are not all such.
    static std::vector<torch::Tensor> manyInt8Activations(const torch::Tensor& x, const std::vector<const Linear*>& layers,
                                                          const LoraSet* lora);

    torch::Tensor weight_, bias_, scale_;
    Placement placement_;
    std::shared_ptr<KeptPanels> panels_;  // shared by copies of the layer: one weight, one layout
    std::string name_;
    int slot_ = -1;
};

// Numbers a model's Linears 0, 1, ... in the order given (the model's linears()): the slots adapters bind by.
// For the model's own constructor, which owns the layers the pointers name.
void numberSlots(const std::vector<const Linear*>& linears);
// Lets a model's W8A8 layers keep their panels (Linear::keepPanels) when their weights take at most 512 MB together:
// a translation model's tens of MB, not an LLM's gigabytes, whose products lay panels out per call (its batched
// steps stream the weights from memory either way). For the model's own constructor, as numberSlots().
void keepPanelsOfSmallModel(const std::vector<const Linear*>& linears);
// The layers as adapters and quantized copies see them (their names, shapes and slots).
std::vector<LinearModule> modulesOf(const std::vector<const Linear*>& linears);

namespace ops {

// x W^T for float32 x [..., in] and W as mapped, on the CPU kernels: float32 through linear(), bfloat16
// through kernels that widen the weights on the fly, so bf16 checkpoints are never converted.
// With `bf16Activations` (a bf16 model, Placement) the rows may take the AVX512-BF16 kernel, which rounds them to
// bf16 (kernels/bf16_dot_gemm.h): prompts and decoding steps alike.
torch::Tensor project(const torch::Tensor& x, const torch::Tensor& weight, bool bf16Activations = false);

// Up to this many rows (a decoding step, a few beams, a batch of sequences) a float32 product runs on the
// engine's own kernel: it streams W once at memory speed for all rows, where libtorch sent one row to a GEMM
// 2-4x slower than mv() and OpenBLAS ran 4 rows at ~8 GFLOP/s. The kernel sums each output in the same order
// whatever the row count, so a batched step gives each sequence the numbers of its step alone.
constexpr std::int64_t kSmallRows = cpu::kSmallRows;
torch::Tensor smallRowsLinear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {});
// Whether products by `weight` take one kernel at any row count on this CPU, so each output row depends on its own
// input row alone, whatever rows come with it: an AVX2 CPU and a contiguous weight, float32 (smallRowsLinear()) or
// 8-bit with float32 activations (project()'s decoding-step kernel, scaled per output channel afterwards).
bool rowStableAtAnyCount(const torch::Tensor& weight, bool bf16Activations = false);

// y = x W^T + b on the CPU kernels. Weights other than float32 go through project(); the bias is widened
// (a few hundred values). Float32 goes through smallRowsLinear() (any number of rows on AVX2 CPUs, a few
// elsewhere) unless autograd must see the product (tools/train builds on these layers); the rest through libtorch.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias = {}, bool bf16Activations = false);

// x W^T with libtorch's own float32 matmul, bf16 weights widened for the call (a temporary; device memory
// keeps them bf16). Float32 keeps the reference's 1e-4 parity: bf16 products measured up to 8e-2 off.
torch::Tensor libtorchProject(const torch::Tensor& x, const torch::Tensor& weight);

// x's rows quantized per token to int8 against int8 weights, the raw products (kernels/int8_activation_gemm.h), with
// the weight's panels where the layer keeps them.
torch::Tensor projectInt8Activations(const torch::Tensor& x, const torch::Tensor& weight, const kernels::Int8Panels* panels = nullptr,
                                     const kernels::ChannelEpilogue* epilogue = nullptr);
// x's rows as compressed-tensors' dynamic per-token int8 fake quantization gives them (libtorch's path of W8A8).
torch::Tensor fakeQuantizedPerToken(const torch::Tensor& x);

// A contiguous CPU weight (float32, bf16, int8 or E4M3 codes bound as bytes) and its float32 scale ([out], [1] or
// undefined) as the CPU kernels read them.
cpu::Matrix matrixOf(const torch::Tensor& weight, const torch::Tensor& scale = {});

// The weight as float32 values (a copy unless it is float32): float8 E4M3 codes (bound as bytes) decoded,
// int8 and bf16 widened. For libtorch's paths; the CPU kernels read the weights as mapped.
torch::Tensor floatWeight(const torch::Tensor& weight);

}  // namespace ops
}  // namespace dragoman
