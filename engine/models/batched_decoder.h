#pragma once
// An encoder-decoder model that can run one decoding step for several requests at once: every request's
// hypotheses go through each projection together (the weights are read once for all of them), while
// attention stays per request, over its own caches and source.
#include "models/encoder_decoder.h"

#include <vector>

namespace dragoman {

class BatchedDecoder {
public:
    virtual ~BatchedDecoder() = default;
    // states[i] is fed tokens[i] ([B_i] int64, one per hypothesis). Returns float32 logits [sum B_i, V], the
    // states' rows one after another; each state's rows equal what step() returns for it alone, bit for bit.
    virtual torch::Tensor stepMany(const std::vector<DecoderState*>& states, const std::vector<torch::Tensor>& tokens) const = 0;
    // Several sources through the encoder with one adapter (may be null): result i equals encode(sources[i],
    // adapter) bit for bit. Where the products allow it, every source's rows go through each projection together.
    virtual std::vector<torch::Tensor> encodeMany(const std::vector<std::vector<TokenId>>& sources, const LoraSet* adapter) const = 0;
    // remember() for several encoded sources with one adapter: result i equals remember(encoded[i], adapter) bit for
    // bit, every source's rows through each product together where the products allow it.
    virtual std::vector<std::shared_ptr<const SourceMemory>> rememberMany(const std::vector<torch::Tensor>& encoded,
                                                                          const LoraSet* adapter) const = 0;
};

}  // namespace dragoman
