#include "decode/libtorch_seq2seq.h"

#include "decode/logits_tensor.h"
#include "models/batched_decoder.h"

#include <torch/torch.h>

namespace dragoman {
namespace {

class LibtorchSeq2Seq final : public Seq2SeqModel {
public:
    explicit LibtorchSeq2Seq(std::shared_ptr<const EncoderDecoderModel> model)
        : model_(std::move(model)), batched_(dynamic_cast<const BatchedDecoder*>(model_.get())) {}

    std::vector<std::shared_ptr<const SourceMemory>> encodeSources(const std::vector<std::vector<TokenId>>& sources,
                                                                   const LoraSet* adapter) const override {
        c10::InferenceMode guard;
        std::vector<std::shared_ptr<const SourceMemory>> memories;
        if (!batched_) {
            for (const auto& source : sources)
                memories.push_back(model_->remember(model_->encode(source, adapter), adapter));
            return memories;
        }
        // Passes of at most kMostSourceRowsPerPass source tokens, and every source in one; a source gets the same numbers
        // in any pass.
        for (std::size_t first = 0; first < sources.size();) {
            std::size_t end = first + 1, rows = sources[first].size();
            while (end < sources.size() && rows + sources[end].size() <= static_cast<std::size_t>(kMostSourceRowsPerPass))
                rows += sources[end++].size();
            const auto part = batched_->encodeMany(
                {sources.begin() + static_cast<std::ptrdiff_t>(first), sources.begin() + static_cast<std::ptrdiff_t>(end)}, adapter);
            const auto remembered = batched_->rememberMany(part, adapter);
            memories.insert(memories.end(), remembered.begin(), remembered.end());
            first = end;
        }
        return memories;
    }

    std::vector<float> encoderOutput(const std::vector<TokenId>& source, const LoraSet* adapter) const override {
        c10::InferenceMode guard;
        const auto encoded = model_->encode(source, adapter).contiguous();
        return {encoded.data_ptr<float>(), encoded.data_ptr<float>() + encoded.numel()};
    }

    std::unique_ptr<DecoderState> startDecoding(std::shared_ptr<const SourceMemory> source, std::int64_t batch, std::int64_t maxSteps,
                                                std::shared_ptr<const LoraSet> adapter) const override {
        c10::InferenceMode guard;
        return model_->startDecoding(std::move(source), batch, maxSteps, std::move(adapter));
    }

    Logits stepMany(const std::vector<DecoderState*>& states, const std::vector<std::vector<TokenId>>& tokens) const override {
        c10::InferenceMode guard;
        std::vector<torch::Tensor> ids;
        for (const auto& t : tokens)
            ids.push_back(torch::tensor(t, torch::kInt64));
        if (batched_ && states.size() > 1) return logitsOf(batched_->stepMany(states, ids));
        std::vector<torch::Tensor> rows;
        for (std::size_t i = 0; i < states.size(); ++i)
            rows.push_back(model_->step(*states[i], ids[i]));
        return logitsOf(rows.size() == 1 ? rows.front() : torch::cat(rows));
    }

    void reorder(DecoderState& state, const std::vector<std::int64_t>& beams) const override {
        c10::InferenceMode guard;
        model_->reorder(state, torch::tensor(beams, torch::kInt64));
    }

    std::int64_t vocabSize() const override { return model_->vocabSize(); }
    std::int64_t maxPositions() const override { return model_->maxPositions(); }
    std::int64_t hiddenSize() const override { return model_->hiddenSize(); }
    TokenId decoderStartId() const override { return model_->decoderStartId(); }
    TokenId eosId() const override { return model_->eosId(); }
    TokenId padId() const override { return model_->padId(); }
    std::vector<LinearModule> linears() const override { return model_->linears(); }
    std::vector<VocabularyTable> vocabularyTables() const override { return model_->vocabularyTables(); }

private:
    std::shared_ptr<const EncoderDecoderModel> model_;
    const BatchedDecoder* batched_;
};

}  // namespace

std::shared_ptr<const Seq2SeqModel> seq2seqOf(std::shared_ptr<const EncoderDecoderModel> model) {
    return std::make_shared<const LibtorchSeq2Seq>(std::move(model));
}

}  // namespace dragoman
