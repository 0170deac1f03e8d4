#include "models/marian_config.h"

#include "models/config_reader.h"
#include "models/quantization_config.h"

namespace dragoman {

MarianConfig MarianConfig::parse(const nlohmann::json& json, const std::string& label) {
    const ConfigReader r(json, label);
    MarianConfig c;
    c.dModel = r.integer("d_model");
    c.encoderLayers = r.size("encoder_layers");
    c.decoderLayers = r.size("decoder_layers");
    c.encoderHeads = r.size("encoder_attention_heads");
    c.decoderHeads = r.size("decoder_attention_heads");
    c.encoderFfn = r.size("encoder_ffn_dim");
    c.decoderFfn = r.size("decoder_ffn_dim");
    c.vocabSize = r.size("vocab_size");
    c.maxPositions = r.size("max_position_embeddings");
    c.decoderStart = r.integer("decoder_start_token_id");
    c.eos = r.integer("eos_token_id");
    c.pad = r.integer("pad_token_id", c.decoderStart);
    c.scaleEmbedding = r.boolean("scale_embedding", false);
    c.activation = r.text("activation_function", "gelu");
    if (c.dModel <= 0 || c.dModel % 2 != 0) r.unsupported("d_model", "must be a positive even number");
    if (c.dModel % c.encoderHeads != 0 || c.dModel % c.decoderHeads != 0)
        r.unsupported("encoder_attention_heads", "d_model must divide evenly into heads");
    if (c.activation != "swish" && c.activation != "silu" && c.activation != "relu" && c.activation != "gelu")
        r.unsupported("activation_function", "'" + c.activation + "' (swish, silu, relu, gelu are supported)");
    if (r.boolean("normalize_before", false)) r.unsupported("normalize_before", "pre-LN Marian models are not supported");
    if (r.boolean("normalize_embedding", false) || r.boolean("add_final_layer_norm", false))
        r.unsupported("normalize_embedding", "embedding/final layer norms are not supported");
    if (!r.boolean("static_position_embeddings", true)) r.unsupported("static_position_embeddings", "learned positions");
    if (!r.boolean("share_encoder_decoder_embeddings", true))
        r.unsupported("share_encoder_decoder_embeddings", "separate source/target vocabularies are not supported yet");
    if (r.integer("decoder_vocab_size", c.vocabSize) != c.vocabSize) r.unsupported("decoder_vocab_size", "differs from vocab_size");
    for (auto id : {c.decoderStart, c.eos, c.pad})
        if (id < 0 || id >= c.vocabSize) r.unsupported("eos_token_id", "special token ids must lie inside the vocabulary");
    c.int8Activations = checkQuantizationConfig(json, label).activations == QuantizationScheme::Activations::Int8PerToken;
    return c;
}

}  // namespace dragoman
