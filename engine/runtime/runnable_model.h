#pragma once
// A loaded model ready to run: weights, architecture, tokenizer and generation settings together.
// Built by the architecture named in config.json ("model_type"); read-only and shareable across requests.
#include "decode/generation_config.h"
#include "load/model_loader.h"
#include "models/causal_lm.h"
#include "models/encoder_decoder.h"
#include "models/placement.h"
#include "text/tokenizer.h"

#include <memory>

namespace dragoman {

struct RunnableModel {
    LoadedModel loaded;
    std::string architecture;                             // model_type
    std::shared_ptr<EncoderDecoderModel> encoderDecoder;  // set for encoder-decoder architectures
    std::shared_ptr<CausalLanguageModel> causal;          // set for decoder-only architectures
    std::unique_ptr<Tokenizer> tokenizer;                 // null for checkpoints without tokenizer files
    GenerationConfig generation;
    Placement placement;  // where the architecture runs (CUDA for HY-MT when available, see runtime/device.h)

    const std::string& id() const { return loaded.entry.id; }
    // Where inference runs, for the status line: "CUDA:0" or "CPU", with the reason when CUDA is not used.
    std::string device() const;
    // Throws Error("tokenizer") when the folder has none.
    const Tokenizer& requireTokenizer() const;
};

// Loads (see loadModel) and builds the architecture. Throws Error("config") for an unsupported model_type.
std::shared_ptr<RunnableModel> openModel(const ModelStore& store, const std::string& idOrPath, const LoadOptions& options = {});

}  // namespace dragoman
