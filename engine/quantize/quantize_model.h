#pragma once
// Writes a weight-only 8-bit copy of a model in the compressed-tensors layout the engine reads
// (models/quantization_config.h): every weight of the architecture's linear layers, and by default its
// embedding and output tables, as I8 or F8_E4M3 with a float32 weight_scale per output channel (per row of a
// table, [rows, 1]) or per tensor ([1]), symmetric, s = max|W| / 127 (int8) or / 448 (FP8), values rounded
// half to even; everything else (norms, biases, tokenizer and generation files) copied unchanged, stored copies
// of a quantized table dropped (they are tied), and config.json given its quantization_config.
// The same arithmetic as ../shared/fixtures/gen/quant.py, so its dequantized twin is the oracle; with the
// tables kept in floating point the copy is quant.py's, byte for byte.
#include "quantize/quantize_settings.h"
#include "runtime/runnable_model.h"
#include "util/progress.h"

#include <filesystem>
#include <string>

namespace dragoman {

// `model` is open (its weights mapped); `out` must not exist or be an empty folder. Progress goes to `meter`'s
// phases `firstPhase` (measuring the weights) and `firstPhase + 1` (writing). The weights file appears
// atomically; on any failure (or a cancel through the meter) the files written so far are removed again.
// Throws Error("input") for a model that is already quantized or an `out` in use, Error("io") on a write failure.
QuantizeSummary quantizeModel(const RunnableModel& model, const std::filesystem::path& out, const QuantizeSettings& settings,
                              ProgressMeter& meter, std::size_t firstPhase);

}  // namespace dragoman
