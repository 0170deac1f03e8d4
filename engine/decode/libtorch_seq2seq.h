#pragma once
// A libtorch encoder-decoder model (models/encoder_decoder.h: MarianModel, built with Placement::libtorchOps, and what
// tools/train trains) seen as a Seq2SeqModel, so the translation strategy and the decoding loops run it as they run the
// CPU kernels' model. Every call runs in libtorch's InferenceMode, which the model's caches are made and updated in.
#include "models/encoder_decoder.h"

#include <memory>

namespace dragoman {

std::shared_ptr<const Seq2SeqModel> seq2seqOf(std::shared_ptr<const EncoderDecoderModel> model);

}  // namespace dragoman
