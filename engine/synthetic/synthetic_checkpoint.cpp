#include "synthetic/synthetic_checkpoint.h"
#include "synthetic/synthetic_tokenizer.h"

#include "io/safetensors.h"
#include "io/safetensors_writer.h"
#include "kernels/bf16.h"
#include "util/error.h"
#include "util/json_file.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstring>
#include <fstream>

namespace dragoman {
namespace {

struct HunyuanShape {
    int hidden, intermediate, layers, heads, kvHeads, headDim, vocab;
    bool tied;
    int bos, eos, pad;
};

struct MarianShape {
    int dModel, encoderLayers, decoderLayers, heads, ffn, vocab, maxPositions;
};

HunyuanShape hunyuanPreset(const std::string& preset) {
    if (preset == "hy-mt1.5-1.8b") return {2048, 6144, 32, 16, 4, 128, 120818, true, 120000, 120020, 120002};
    // HY-MT1.5-7B keeps the Hunyuan-7B shapes and vocabulary, with an untied output layer.
    if (preset == "hy-mt1.5-7b") return {4096, 14336, 32, 32, 8, 128, 128167, false, 127958, 127960, 127961};
    if (preset == "tiny") return {64, 128, 2, 4, 2, 16, 763, true, 756, 759, 762};
    throw Error("usage", "unknown hunyuan preset '" + preset + "' (hy-mt1.5-1.8b, hy-mt1.5-7b, tiny)");
}

MarianShape marianPreset(const std::string& preset) {
    if (preset == "opus-mt-base") return {512, 6, 6, 8, 2048, 58101, 512};
    if (preset == "tiny") return {32, 2, 2, 4, 64, 332, 64};
    throw Error("usage", "unknown marian preset '" + preset + "' (opus-mt-base, tiny)");
}

// SplitMix64: fast, seedable, and the same on every machine.
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::uint64_t nameSeed(const std::string& name, std::uint64_t seed) {
    std::uint64_t h = 1469598103934665603ull ^ seed;
    for (unsigned char c : name)
        h = (h ^ c) * 1099511628211ull;
    return h;
}

// Uniform values in [-scale, scale] (scale = 0: all ones, for norm weights), as bf16 or f32.
SafetensorsWriter::Fill randomFill(DType dtype, float scale, std::uint64_t seed) {
    return [=](std::span<std::byte> buffer, std::uint64_t offset) {
        const std::size_t width = dtypeSize(dtype);
        std::uint64_t index = offset / width;
        for (std::size_t at = 0; at < buffer.size(); at += width, ++index) {
            float value = 1.0f;
            if (scale > 0) {
                const std::uint64_t r = mix(seed + index);
                value = scale * (float(r >> 40) / float(1ull << 23) - 1.0f);
            }
            if (dtype == DType::BF16) {
                const std::uint16_t half = kernels::narrowToBf16(value);
                std::memcpy(buffer.data() + at, &half, 2);
            } else {
                std::memcpy(buffer.data() + at, &value, 4);
            }
        }
    };
}

class Builder {
public:
    Builder(DType dtype, std::uint64_t seed) : dtype_(dtype), seed_(seed) {}
    // A weight matrix [out, in] with Xavier-like scale, or a vector.
    void matrix(const std::string& name, std::int64_t out, std::int64_t in) {
        writer.add(name, dtype_, {out, in}, randomFill(dtype_, std::sqrt(3.0f / float(in)), nameSeed(name, seed_)));
    }
    void embedding(const std::string& name, std::int64_t rows, std::int64_t dim) {
        writer.add(name, dtype_, {rows, dim}, randomFill(dtype_, 0.05f, nameSeed(name, seed_)));
    }
    void ones(const std::string& name, std::int64_t n) { writer.add(name, dtype_, {n}, randomFill(dtype_, 0, 0)); }
    void small(const std::string& name, std::vector<std::int64_t> shape) {
        writer.add(name, dtype_, std::move(shape), randomFill(dtype_, 0.01f, nameSeed(name, seed_)));
    }
    SafetensorsWriter writer;

private:
    DType dtype_;
    std::uint64_t seed_;
};

void writeHunyuan(const HunyuanShape& s, DType dtype, std::uint64_t seed, const std::filesystem::path& dir) {
    Builder b(dtype, seed);
    b.embedding("model.embed_tokens.weight", s.vocab, s.hidden);
    for (int i = 0; i < s.layers; ++i) {
        const std::string p = "model.layers." + std::to_string(i) + ".";
        b.ones(p + "input_layernorm.weight", s.hidden);
        b.matrix(p + "mlp.down_proj.weight", s.hidden, s.intermediate);
        b.matrix(p + "mlp.gate_proj.weight", s.intermediate, s.hidden);
        b.matrix(p + "mlp.up_proj.weight", s.intermediate, s.hidden);
        b.ones(p + "post_attention_layernorm.weight", s.hidden);
        b.matrix(p + "self_attn.k_proj.weight", s.kvHeads * s.headDim, s.hidden);
        b.ones(p + "self_attn.key_layernorm.weight", s.headDim);
        b.matrix(p + "self_attn.o_proj.weight", s.hidden, s.heads * s.headDim);
        b.matrix(p + "self_attn.q_proj.weight", s.heads * s.headDim, s.hidden);
        b.ones(p + "self_attn.query_layernorm.weight", s.headDim);
        b.matrix(p + "self_attn.v_proj.weight", s.kvHeads * s.headDim, s.hidden);
    }
    b.ones("model.norm.weight", s.hidden);
    if (!s.tied) b.matrix("lm_head.weight", s.vocab, s.hidden);
    b.writer.setMetadata("format", "pt");
    b.writer.setMetadata("dragoman", "synthetic");  // what a later make-synthetic may write over
    b.writer.write(dir / "model.safetensors");

    nlohmann::ordered_json config{{"architectures", {"HunYuanDenseV1ForCausalLM"}},
                                  {"model_type", "hunyuan_v1_dense"},
                                  {"attention_bias", false},
                                  {"attention_dropout", 0.0},
                                  {"bos_token_id", s.bos},
                                  {"eos_token_id", s.eos},
                                  {"pad_token_id", s.pad},
                                  {"head_dim", s.headDim},
                                  {"hidden_act", "silu"},
                                  {"hidden_size", s.hidden},
                                  {"initializer_range", 0.02},
                                  {"intermediate_size", s.intermediate},
                                  {"max_position_embeddings", 32768},
                                  {"mlp_bias", false},
                                  {"num_attention_heads", s.heads},
                                  {"num_hidden_layers", s.layers},
                                  {"num_key_value_heads", s.kvHeads},
                                  {"rms_norm_eps", 1e-5},
                                  {"rope_scaling", {{"alpha", 1000.0}, {"factor", 1.0}, {"type", "dynamic"}}},
                                  {"rope_theta", 10000.0},
                                  {"tie_word_embeddings", s.tied},
                                  {"use_cache", true},
                                  {"use_qk_norm", true},
                                  {"vocab_size", s.vocab},
                                  {"torch_dtype", dtype == DType::BF16 ? "bfloat16" : "float32"}};
    writeJsonFile(dir / "config.json", config, 2);
    writeJsonFile(dir / "generation_config.json",
                  {{"bos_token_id", s.bos},
                   {"eos_token_id", s.eos},
                   {"pad_token_id", s.pad},
                   {"do_sample", true},
                   {"top_k", 20},
                   {"top_p", 0.6},
                   {"temperature", 0.7},
                   {"repetition_penalty", 1.05}},
                  2);
    // A tokenizer of the real size: start-up benchmarks include loading it, and translate runs end to end.
    const bool legacy = s.bos == 127958;
    writeSyntheticTokenizer({s.vocab, std::min({s.bos, s.eos, s.pad}), legacy, s.bos, s.eos, s.pad, seed}, dir);
}

void writeMarianLayer(Builder& b, const std::string& p, const MarianShape& s, bool decoder) {
    auto attention = [&](const std::string& a) {
        for (const char* proj : {"k_proj", "out_proj", "q_proj", "v_proj"}) {
            b.small(a + proj + ".bias", {s.dModel});
            b.matrix(a + proj + ".weight", s.dModel, s.dModel);
        }
    };
    if (decoder) {
        attention(p + "encoder_attn.");
        b.small(p + "encoder_attn_layer_norm.bias", {s.dModel});
        b.ones(p + "encoder_attn_layer_norm.weight", s.dModel);
    }
    b.small(p + "fc1.bias", {s.ffn});
    b.matrix(p + "fc1.weight", s.ffn, s.dModel);
    b.small(p + "fc2.bias", {s.dModel});
    b.matrix(p + "fc2.weight", s.dModel, s.ffn);
    b.small(p + "final_layer_norm.bias", {s.dModel});
    b.ones(p + "final_layer_norm.weight", s.dModel);
    attention(p + "self_attn.");
    b.small(p + "self_attn_layer_norm.bias", {s.dModel});
    b.ones(p + "self_attn_layer_norm.weight", s.dModel);
}

void writeMarian(const MarianShape& s, DType dtype, std::uint64_t seed, const std::filesystem::path& dir) {
    Builder b(dtype, seed);
    b.small("final_logits_bias", {1, s.vocab});
    for (int i = 0; i < s.decoderLayers; ++i)
        writeMarianLayer(b, "model.decoder.layers." + std::to_string(i) + ".", s, true);
    for (int i = 0; i < s.encoderLayers; ++i)
        writeMarianLayer(b, "model.encoder.layers." + std::to_string(i) + ".", s, false);
    b.embedding("model.shared.weight", s.vocab, s.dModel);
    b.writer.setMetadata("format", "pt");
    b.writer.setMetadata("dragoman", "synthetic");  // what a later make-synthetic may write over
    b.writer.write(dir / "model.safetensors");

    const int pad = s.vocab - 1;
    nlohmann::ordered_json config{{"architectures", {"MarianMTModel"}},
                                  {"model_type", "marian"},
                                  {"activation_function", "swish"},
                                  {"bad_words_ids", {{pad}}},
                                  {"bos_token_id", 0},
                                  {"d_model", s.dModel},
                                  {"decoder_attention_heads", s.heads},
                                  {"decoder_ffn_dim", s.ffn},
                                  {"decoder_layers", s.decoderLayers},
                                  {"decoder_start_token_id", pad},
                                  {"decoder_vocab_size", s.vocab},
                                  {"encoder_attention_heads", s.heads},
                                  {"encoder_ffn_dim", s.ffn},
                                  {"encoder_layers", s.encoderLayers},
                                  {"eos_token_id", 0},
                                  {"forced_eos_token_id", 0},
                                  {"is_encoder_decoder", true},
                                  {"max_length", s.maxPositions},
                                  {"max_position_embeddings", s.maxPositions},
                                  {"normalize_before", false},
                                  {"normalize_embedding", false},
                                  {"num_beams", 4},
                                  {"num_hidden_layers", s.encoderLayers},
                                  {"pad_token_id", pad},
                                  {"scale_embedding", true},
                                  {"share_encoder_decoder_embeddings", true},
                                  {"static_position_embeddings", true},
                                  {"tie_word_embeddings", true},
                                  {"torch_dtype", dtype == DType::BF16 ? "bfloat16" : "float32"},
                                  {"unk_token_id", 1},
                                  {"use_cache", true},
                                  {"vocab_size", s.vocab}};
    writeJsonFile(dir / "config.json", config, 2);
    writeJsonFile(dir / "generation_config.json",
                  {{"bad_words_ids", {{pad}}},
                   {"bos_token_id", 0},
                   {"decoder_start_token_id", pad},
                   {"eos_token_id", 0},
                   {"forced_eos_token_id", 0},
                   {"max_length", s.maxPositions},
                   {"num_beams", 4},
                   {"pad_token_id", pad}},
                  2);
}

}  // namespace

std::vector<std::string> syntheticPresets(const std::string& arch) {
    if (arch == "hunyuan") return {"hy-mt1.5-1.8b", "hy-mt1.5-7b", "tiny"};
    if (arch == "marian") return {"opus-mt-base", "tiny"};
    return {};
}

void writeSyntheticCheckpoint(const SyntheticSpec& spec, const std::filesystem::path& dir) {
    DType dtype;
    if (spec.dtype == "bf16")
        dtype = DType::BF16;
    else if (spec.dtype == "f32")
        dtype = DType::F32;
    else
        throw Error("usage", "unknown dtype '" + spec.dtype + "' (bf16, f32)");
    if (spec.arch != "hunyuan" && spec.arch != "marian") throw Error("usage", "unknown arch '" + spec.arch + "' (hunyuan, marian)");
    if (spec.arch == "hunyuan")
        hunyuanPreset(spec.preset);  // an unknown preset is a usage error before anything else
    else
        marianPreset(spec.preset);
    // Into an empty folder, or over an earlier synthetic checkpoint (its weights say so): never over a user's files,
    // a real checkpoint's included, whose file names are the same.
    std::error_code error;
    const bool ours = dragomanWriterOf(dir / "model.safetensors") == "synthetic";
    for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
        const auto name = entry.path().filename().string();
        const bool checkpointFile = name == "config.json" || name == "generation_config.json" || name == "model.safetensors" ||
                                    name == "tokenizer.json" || name == "tokenizer_config.json";
        if (!checkpointFile)
            throw Error("io", dir.string() + " holds other files (" + name +
                                  "): make-synthetic writes into an empty folder or over its own checkpoint");
        if (!ours)
            throw Error("io", dir.string() + " holds a checkpoint that make-synthetic did not write (" + name +
                                  "): it writes into an empty folder or over its own checkpoint");
    }
    std::filesystem::create_directories(dir);
    if (spec.arch == "hunyuan")
        writeHunyuan(hunyuanPreset(spec.preset), dtype, spec.seed, dir);
    else
        writeMarian(marianPreset(spec.preset), dtype, spec.seed, dir);
}

}  // namespace dragoman
