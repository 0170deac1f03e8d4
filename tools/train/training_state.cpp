#include "training_state.h"

#include "io/safetensors_writer.h"
#include "util/error.h"

#include <cmath>
#include <cstring>

namespace dragoman::train {
namespace {

bool endsWith(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

TrainingState::TrainingState(const MarianConfig& config, std::uint64_t seed, double learningRate) : config_(config) {
    torch::manual_seed(seed);
    torch::NoGradGuard noGrad;
    for (const auto& [name, shape] : config.parameterShapes()) {
        torch::Tensor t;
        if (name == "model.shared.weight") {
            t = torch::randn(shape) * std::pow(static_cast<double>(config.dModel), -0.5);
        } else if (name == "final_logits_bias") {
            t = torch::zeros(shape);  // a buffer in transformers, never trained
        } else if (shape.size() == 2) {
            const double bound = std::sqrt(6.0 / static_cast<double>(shape[0] + shape[1]));
            t = torch::empty(shape).uniform_(-bound, bound);
        } else {
            t = endsWith(name, "norm.weight") ? torch::ones(shape) : torch::zeros(shape);
        }
        if (name != "final_logits_bias") {
            t.set_requires_grad(true);
            trainable_.push_back(t);
        }
        weights_.emplace(name, t);
    }
    optimizer_ = std::make_unique<torch::optim::AdamW>(
        trainable_, torch::optim::AdamWOptions(learningRate).betas({0.9, 0.98}).eps(1e-9).weight_decay(1e-4));
}

void TrainingState::setLearningRate(double lr) {
    for (auto& group : optimizer_->param_groups())
        static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

void TrainingState::save(const std::filesystem::path& file) const {
    torch::serialize::OutputArchive archive;
    for (const auto& [name, tensor] : weights_)
        archive.write("weights/" + name, tensor.detach());
    archive.write("progress", torch::tensor({progress_.step, progress_.epoch, progress_.batchInEpoch}, torch::kInt64));
    torch::serialize::OutputArchive optimizerArchive;
    optimizer_->save(optimizerArchive);
    archive.write("optimizer", optimizerArchive);
    const auto temporary = file.string() + ".partial";
    try {
        archive.save_to(temporary);
    } catch (const std::exception& e) {
        throw Error("io", "cannot write checkpoint " + temporary + ": " + e.what());
    }
    std::filesystem::rename(temporary, file);
}

void TrainingState::load(const std::filesystem::path& file) {
    torch::serialize::InputArchive archive;
    try {
        archive.load_from(file.string());
        torch::NoGradGuard noGrad;
        for (auto& [name, tensor] : weights_) {
            torch::Tensor stored;
            archive.read("weights/" + name, stored);
            if (stored.sizes() != tensor.sizes()) throw Error("checkpoint", file.string() + ": " + name + " has another shape");
            tensor.copy_(stored);
        }
        torch::Tensor progress;
        archive.read("progress", progress);
        progress_ = {progress[0].item<std::int64_t>(), progress[1].item<std::int64_t>(), progress[2].item<std::int64_t>()};
        torch::serialize::InputArchive optimizerArchive;
        archive.read("optimizer", optimizerArchive);
        optimizer_->load(optimizerArchive);
    } catch (const Error&) {
        throw;
    } catch (const std::exception& e) {
        throw Error("checkpoint", "cannot resume from " + file.string() + ": " + e.what());
    }
}

void TrainingState::exportSafetensors(const std::filesystem::path& file) const {
    SafetensorsWriter writer;
    writer.setMetadata("format", "pt");
    for (const auto& [name, tensor] : weights_) {
        const auto values = tensor.detach().to(torch::kFloat32).contiguous();
        std::vector<std::byte> bytes(static_cast<std::size_t>(values.numel()) * sizeof(float));
        std::memcpy(bytes.data(), values.data_ptr<float>(), bytes.size());
        writer.addBytes(name, DType::F32, values.sizes().vec(), std::move(bytes));
    }
    writer.write(file);
}

}  // namespace dragoman::train
