#pragma once
// The trainable weights of a Marian model (named exactly as the checkpoint stores them), their optimizer, and
// saving/resuming all of it, so that a run stopped at any point continues where it was.
#include "models/marian.h"

#include <torch/torch.h>

#include <filesystem>
#include <memory>

namespace dragoman::train {

struct Progress {
    std::int64_t step = 0, epoch = 0, batchInEpoch = 0;
};

class TrainingState {
public:
    // Fresh weights: embeddings N(0, d^-1/2), projections Xavier-uniform, biases 0, LayerNorms 1/0.
    TrainingState(const MarianConfig& config, std::uint64_t seed, double learningRate);

    WeightTable& weights() { return weights_; }
    torch::optim::AdamW& optimizer() { return *optimizer_; }
    Progress& progress() { return progress_; }
    void setLearningRate(double lr);

    // Atomic (written under a temporary name, then renamed). Throws Error("io").
    void save(const std::filesystem::path& file) const;
    // Restores weights, optimizer moments and progress. Throws Error("checkpoint") on a mismatch.
    void load(const std::filesystem::path& file);
    // model.safetensors in the Hugging Face Marian layout (float32), written atomically.
    void exportSafetensors(const std::filesystem::path& file) const;

private:
    MarianConfig config_;
    WeightTable weights_;
    std::vector<torch::Tensor> trainable_;
    std::unique_ptr<torch::optim::AdamW> optimizer_;
    Progress progress_;
};

}  // namespace dragoman::train
