#pragma once
// Logits (decode/logits.h) to and from libtorch tensors, sharing the memory where it can: what the models that run
// on libtorch (Marian, HY-MT on a device) hand the decoding loops, and what beam search computes with.
#include "decode/logits.h"

#include <torch/torch.h>

namespace dragoman {

// A float32 [rows, vocab] (or [vocab]: one row) tensor's values; copied to the CPU as float32 contiguous if they are
// not already.
inline Logits logitsOf(torch::Tensor t) {
    t = t.to(torch::kCPU, torch::kFloat32).contiguous();
    const auto vocab = t.size(-1), rows = t.dim() == 1 ? 1 : t.numel() / std::max<std::int64_t>(1, vocab);
    auto keep = std::make_shared<torch::Tensor>(t);
    return {std::shared_ptr<const void>(keep, keep->data_ptr()), t.data_ptr<float>(), rows, vocab};
}

// The same memory as a [rows, vocab] tensor (which holds it alive).
inline torch::Tensor tensorOf(const Logits& logits) {
    return torch::from_blob(
        logits.data(), {logits.rows(), logits.vocab()}, [keep = logits.keep()](void*) mutable { keep.reset(); }, torch::kFloat32);
}

}  // namespace dragoman
