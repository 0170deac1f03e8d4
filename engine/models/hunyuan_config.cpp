#include "models/hunyuan_config.h"

#include "models/config_reader.h"
#include "models/quantization_config.h"

#include <cmath>

namespace dragoman {

HunyuanConfig HunyuanConfig::parse(const nlohmann::json& json, const std::string& label) {
    const ConfigReader r(json, label);
    HunyuanConfig c;
    c.hidden = r.size("hidden_size");
    c.intermediate = r.size("intermediate_size");
    c.layers = r.size("num_hidden_layers");
    c.heads = r.integer("num_attention_heads");
    c.kvHeads = r.integer("num_key_value_heads", c.heads);
    c.headDim = r.integer("head_dim", r.integer("attention_head_dim", c.heads > 0 ? c.hidden / c.heads : 0));
    c.vocabSize = r.size("vocab_size");
    c.maxPositions = r.size("max_position_embeddings");
    c.ropeTheta = r.number("rope_theta", 10000.0);
    c.rmsEps = r.number("rms_norm_eps", 1e-5);
    c.qkNorm = r.boolean("use_qk_norm", true);
    if (json.contains("tie_word_embeddings")) c.tieWordEmbeddings = r.boolean("tie_word_embeddings", false);
    for (const char* key : {"torch_dtype", "dtype"})
        if (c.dtype.empty() && json.contains(key) && json[key].is_string()) c.dtype = json[key].get<std::string>();
    if (c.heads <= 0 || c.kvHeads <= 0 || c.heads % c.kvHeads != 0) r.unsupported("num_key_value_heads", "must divide num_attention_heads");
    if (c.headDim <= 2 || c.headDim % 2 != 0) r.unsupported("head_dim", "must be an even number above 2");
    if (r.text("hidden_act", "silu") != "silu") r.unsupported("hidden_act", "only silu is supported");
    if (r.boolean("attention_bias", false)) r.unsupported("attention_bias", "attention biases are not supported");
    if (r.boolean("mlp_bias", false)) r.unsupported("mlp_bias", "MLP biases are not supported");
    if (r.boolean("use_cla", false)) r.unsupported("use_cla", "cross-layer attention is not supported");
    // transformers 5 saves rope_parameters (with rope_theta inside); earlier versions rope_scaling.
    for (const char* key : {"rope_parameters", "rope_scaling"}) {
        if (!json.contains(key) || !json[key].is_object()) continue;
        const auto& scaling = json[key];
        try {
            const auto type = scaling.value("rope_type", scaling.value("type", std::string("default")));
            if (scaling.contains("rope_theta") && scaling["rope_theta"].is_number()) c.ropeTheta = scaling["rope_theta"].get<double>();
            if (type == "dynamic" && scaling.contains("alpha"))
                c.ropeAlpha = scaling["alpha"].get<double>();
            else if (type != "default")
                r.unsupported(key, "type '" + type + "' without alpha is not supported");
        } catch (const nlohmann::json::exception&) {
            r.unsupported(key, "type, rope_theta and alpha must be a string and numbers");
        }
        break;
    }
    if (!(c.ropeTheta > 0) || !(c.ropeAlpha > 0)) r.unsupported("rope_theta", "rope_theta and alpha must be positive");
    if (!std::isfinite(c.ropeBase())) r.unsupported("rope_theta", "rope_theta and alpha give no finite RoPE base");
    if (!(c.rmsEps >= 0) || !std::isfinite(c.rmsEps)) r.unsupported("rms_norm_eps", "must be a finite number, not negative");
    c.int8Activations = checkQuantizationConfig(json, label).activations == QuantizationScheme::Activations::Int8PerToken;
    return c;
}

double HunyuanConfig::ropeBase() const {
    const double hd = static_cast<double>(headDim);
    return ropeTheta * std::pow(ropeAlpha, hd / (hd - 2.0));
}

}  // namespace dragoman
