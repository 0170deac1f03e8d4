#pragma once
// What the tests that hold a model to its float32 twin (LoRA merged twins, dequantized twins) share: the largest
// difference of two logit tensors and token ids that fall inside every fixture's vocabulary.
#include "runtime/runnable_model.h"

#include <torch/torch.h>

#include <vector>

namespace dragoman::test {

inline double maxDiff(const torch::Tensor& a, const torch::Tensor& b) {
    return (a - b).abs().max().item<double>();
}

inline std::vector<TokenId> someIds(std::int64_t count, std::int64_t vocab) {
    std::vector<TokenId> ids;
    for (std::int64_t i = 0; i < count; ++i)
        ids.push_back(3 + (i * 37) % (vocab - 3));
    return ids;
}

}  // namespace dragoman::test
