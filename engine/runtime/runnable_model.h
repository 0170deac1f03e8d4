#pragma once
// A loaded model ready to run: weights, network, tokenizer, generation settings and translation strategy
// together, built by the architecture its config.json names (runtime/architectures.h). Read-only and shared
// by every request; per-request state (KV caches, sampler) lives in the request.
#include "decode/generation_config.h"
#include "layers/placement.h"
#include "load/model_loader.h"
#include "models/causal_lm.h"
#include "runtime/translation_strategy.h"
#include "text/tokenizer.h"

#include <memory>
#include <type_traits>

namespace dragoman {

class EncoderDecoderModel;  // models/encoder_decoder.h: libtorch's side (runtime/torch_backend.h)
class Seq2SeqModel;         // models/seq2seq.h

// The built network: an encoder-decoder (Marian) or a decoder-only (HY-MT) model, one of the two set. `linears`
// and `vocabularyTables` are the network's (models' linears() and vocabularyTables()), taken when it is built, so
// adapters and quantizing need not know which kind it is.
struct Network {
    // An encoder-decoder model as translation runs it (the CPU kernels' Marian, or a libtorch model seen through
    // decode/libtorch_seq2seq.h), and the libtorch model itself where it is one.
    std::shared_ptr<const Seq2SeqModel> seq2seq;
    std::shared_ptr<const EncoderDecoderModel> encoderDecoder;
    std::shared_ptr<const CausalLanguageModel> causal;
    std::vector<LinearModule> linears;
    std::vector<VocabularyTable> vocabularyTables;

    // Either kind (an encoder-decoder model where its class is complete: libtorch's side).
    template <typename Model>
    static Network of(std::shared_ptr<const Model> model) {
        Network network;
        network.linears = model->linears();
        network.vocabularyTables = model->vocabularyTables();
        if constexpr (std::is_base_of_v<CausalLanguageModel, Model>)
            network.causal = std::move(model);
        else if constexpr (std::is_base_of_v<Seq2SeqModel, Model>)
            network.seq2seq = std::move(model);
        else
            network.encoderDecoder = std::move(model);
        return network;
    }
};

struct AdapterLoadStats;  // adapters/adapter_load_stats.h

struct RunnableModel {
    LoadedModel loaded;
    std::string architecture;  // model_type
    Network network;
    std::unique_ptr<Tokenizer> tokenizer;  // null for checkpoints without tokenizer files
    GenerationConfig generation;
    Placement placement;                                  // where the network runs (CUDA for HY-MT when available, see runtime/device.h)
    std::unique_ptr<const TranslationStrategy> strategy;  // null without a tokenizer

    const std::string& id() const { return loaded.entry.id; }
    // Null when the network is of the other kind.
    const Seq2SeqModel* seq2seq() const;
    // The libtorch encoder-decoder model (Placement::libtorchOps); null for the CPU kernels' one.
    const EncoderDecoderModel* encoderDecoder() const;
    const CausalLanguageModel* causal() const;
    // Where inference runs, for the status line: "CUDA:0" or "CPU", with the reason when CUDA is not used.
    std::string device() const;
    // Throws Error("tokenizer") when the folder has none.
    const Tokenizer& requireTokenizer() const;
    // Throws Error("tokenizer") when the model cannot translate text (no tokenizer files).
    const TranslationStrategy& requireStrategy() const;
    // The network's Linear layers by slot, what adapters bind to.
    const std::vector<LinearModule>& linears() const { return network.linears; }
    // The network's embedding and output tables.
    const std::vector<VocabularyTable>& vocabularyTables() const { return network.vocabularyTables; }
    // A PEFT LoRA adapter folder bound to this model (loaded each call; the caller keeps what it wants
    // resident; opens libtorch's side). Throws Error("adapter").
    std::shared_ptr<const LoraSet> loadAdapter(const std::filesystem::path& dir, const std::string& name,
                                               AdapterLoadStats* stats = nullptr) const;
};

struct OpenOptions {
    LoadOptions load;
    // "auto" (CUDA when the linked libtorch has a device, else the CPU), "cpu" or "cuda"; honoured by the
    // architectures that run on devices (HY-MT), the rest use the CPU kernels. "libtorch": the CPU through the
    // libtorch models and operators, for every architecture (a reference path, what tools/train builds on).
    std::string device = "auto";
};

// Loads (see loadModel), builds the network and the tokenizer. Throws Error("config") for an unknown model_type.
std::shared_ptr<RunnableModel> openModel(const ModelStore& store, const std::string& idOrPath, const OpenOptions& options = {});

}  // namespace dragoman
