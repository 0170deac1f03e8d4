#pragma once
// Products of int8 weights (as mapped) with activations quantized to int8 per token, on the fly: the W8A8 scheme of
// compressed-tensors (`input_activations`: 8-bit int, symmetric, dynamic, strategy "token"), which llm-compressor
// writes and vLLM serves, and which CTranslate2 uses for translation models on CPUs.
//
// Semantics, as compressed-tensors' fake quantization computes them: each row's scale is s = max|x| / 127.5 (at least
// float32's epsilon), its codes q = clamp(round(x / s), -128, 127), rounding half to even; the product is the row's
// codes times the weights' codes, summed exactly as integers and multiplied by s (the layer's weight scale is the
// caller's, kernels/channel_epilogue.h). So an output depends on its own row alone, whatever the row count, the
// tile shape or the split over threads, on every CPU: a sequence decoded alone gets the numbers it gets in a batch.
// A row holding a NaN or an infinity gives NaN everywhere.
//
// Why: 64 weights meet 64 codes in one vpdpbusd (AVX512-VNNI), where float32 activations cost a widening and a
// multiply-add per 16 weights; without VNNI, AVX2's vpmaddwd on codes widened to 16 bits; without AVX2, plain loops.
#include <cstdint>

namespace dragoman::kernels {

class Int8Panels;
struct ChannelEpilogue;

// y [m, n] = the raw products of x [m, k] quantized per row, and int8 codes w [n, k], on the kernel threads, then the
// layer's `epilogue` (kernels/channel_epilogue.h, may be null) with its values: fused into the stores where the
// products take panels. Many rows on VNNI read w's panels (kernels/int8_panels.h): `panels` where the caller keeps
// them, else made per call.
void int8ActivationMatmulTransposed(const float* x, const std::int8_t* w, float* y, std::int64_t m, std::int64_t n, std::int64_t k,
                                    const Int8Panels* panels = nullptr, const ChannelEpilogue* epilogue = nullptr);

// Several products of the same rows (a layer's queries, keys and values): the rows quantized once, every product's
// work shared out to the kernel threads in one call. Each y equals what int8ActivationMatmulTransposed() gives it.
struct Int8Product {
    const std::int8_t* w = nullptr;  // [n, k]
    std::int64_t n = 0;
    float* y = nullptr;  // [m, n]
    const Int8Panels* panels = nullptr;
    const ChannelEpilogue* epilogue = nullptr;
};
void int8ActivationProducts(const float* x, std::int64_t m, std::int64_t k, const Int8Product* products, std::size_t count);

// The instruction set the products use on this CPU: "avx512-vnni", "avx2" or "portable".
const char* int8ActivationKernel();

}  // namespace dragoman::kernels
