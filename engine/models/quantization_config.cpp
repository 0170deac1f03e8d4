#include "models/quantization_config.h"

#include "models/activation_scheme.h"
#include "util/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace dragoman {
namespace {

using Weights = QuantizationScheme::Weights;

std::string text(const nlohmann::json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}

// One config group's weights: 8-bit symmetric integers or E4M3 floats, static, scaled per channel or per tensor.
Weights checkWeights(const nlohmann::json& weights, const std::string& where) {
    if (!weights.is_object()) throw Error("unsupported", where + ": no weights scheme");
    auto refuse = [&](const std::string& what) {
        throw Error("unsupported", where + ": " + what +
                                       " is not supported (Dragoman computes with symmetric 8-bit weights, int8 or FP8 E4M3, "
                                       "one scale per output channel or per tensor)");
    };
    const auto type = weights.contains("type") ? text(weights["type"]) : std::string("int");
    if (type != "int" && type != "float") refuse("weight type \"" + type + "\"");
    if (!weights.contains("num_bits") || !weights["num_bits"].is_number_integer() || weights["num_bits"].get<std::int64_t>() != 8)
        refuse("num_bits " + (weights.contains("num_bits") ? text(weights["num_bits"]) : std::string("(missing)")));
    if (weights.contains("symmetric") && !(weights["symmetric"].is_boolean() && weights["symmetric"].get<bool>()))
        refuse("asymmetric quantization (zero points)");
    if (weights.contains("dynamic") && !(weights["dynamic"].is_boolean() && !weights["dynamic"].get<bool>()))
        refuse("dynamic weight quantization");
    const auto strategy = weights.contains("strategy") && weights["strategy"].is_string() ? weights["strategy"].get<std::string>() : "";
    if (strategy != "channel" && strategy != "tensor")
        refuse("strategy \"" + (strategy.empty() ? text(weights.value("strategy", nlohmann::json())) : strategy) + "\"");
    if (weights.contains("group_size") && !weights["group_size"].is_null()) refuse("group_size " + text(weights["group_size"]));
    if (weights.contains("block_structure") && !weights["block_structure"].is_null())
        refuse("block_structure " + text(weights["block_structure"]));
    return type == "int" ? Weights::Int8 : Weights::Float8E4M3;
}

std::vector<std::string> ignoreList(const nlohmann::json& q, const std::string& where) {
    std::vector<std::string> names;
    for (const char* key : {"ignore", "ignored_layers"}) {
        if (!q.contains(key) || q[key].is_null()) continue;
        if (!q[key].is_array()) throw Error("unsupported", where + ": " + key + " is not a list");
        for (const auto& name : q[key]) {
            if (!name.is_string()) throw Error("unsupported", where + ": " + key + " holds " + name.dump() + ", not a module name");
            names.push_back(name.get<std::string>());
        }
    }
    return names;
}

QuantizationScheme compressedTensors(const nlohmann::json& q, const std::string& where) {
    const auto format = q.contains("format") ? text(q["format"]) : std::string("(none)");
    if (format != "int-quantized" && format != "float-quantized" && format != "naive-quantized")
        throw Error("unsupported", where + ": format " + format +
                                       " is not supported (int-quantized, float-quantized and naive-quantized 8-bit weights are)");
    if (!q.contains("config_groups") || !q["config_groups"].is_object() || q["config_groups"].empty())
        throw Error("unsupported", where + ": no config_groups");
    if (q.contains("kv_cache_scheme") && !q["kv_cache_scheme"].is_null())
        throw Error("unsupported", where + ": kv_cache_scheme (a quantized attention cache) is not supported");
    QuantizationScheme scheme;
    bool first = true;
    for (const auto& [name, group] : q["config_groups"].items()) {
        const auto groupWhere = where + ".config_groups." + name;
        if (!group.is_object()) throw Error("unsupported", groupWhere + " is not an object");
        // Linear layers, and embedding tables in the same layout (a row's scale per output channel of a tied
        // output layer); module names or regular expressions as targets are not read.
        const auto targets = group.value("targets", nlohmann::json::array());
        const bool known = targets.is_array() && !targets.empty() &&
                           std::all_of(targets.begin(), targets.end(), [](const auto& t) { return t == "Linear" || t == "Embedding"; });
        if (!known)
            throw Error("unsupported", groupWhere + ": targets " + targets.dump() + " (\"Linear\" and \"Embedding\" are supported)");
        const auto weights = checkWeights(group.value("weights", nlohmann::json()), groupWhere + ".weights");
        if (scheme.weights != Weights::None && scheme.weights != weights)
            throw Error("unsupported", where + ": config groups mixing int8 and FP8 weights are not supported");
        scheme.weights = weights;
        // W8A8's activations are computed as declared; none, or any other scheme, leaves them float32.
        const auto activations =
            declaresInt8ActivationsPerToken(group) ? QuantizationScheme::Activations::Int8PerToken : QuantizationScheme::Activations::Float;
        if (!first && activations != scheme.activations)
            throw Error("unsupported", where + ": config groups mixing int8 and float activations are not supported");
        scheme.activations = activations;
        first = false;
    }
    if (scheme.activations == QuantizationScheme::Activations::Int8PerToken && scheme.weights != Weights::Int8)
        throw Error("unsupported", where + ": int8 activations with FP8 weights are not supported (with int8 weights they are)");
    if (format == "int-quantized" && scheme.weights != Weights::Int8)
        throw Error("unsupported", where + ": format int-quantized with float weights");
    if (format == "float-quantized" && scheme.weights != Weights::Float8E4M3)
        throw Error("unsupported", where + ": format float-quantized with int weights");
    scheme.ignore = ignoreList(q, where);
    return scheme;
}

// The "fp8" method (vLLM's Fp8Config, AutoFP8): E4M3 weights with a per-tensor scale, no config groups.
QuantizationScheme plainFp8(const nlohmann::json& q, const std::string& where) {
    if (q.contains("weight_block_size") && !q["weight_block_size"].is_null())
        throw Error("unsupported", where + ": weight_block_size " + text(q["weight_block_size"]) +
                                       " (block scales) is not supported; per-tensor and per-channel scales are");
    if (q.contains("fmt") && text(q["fmt"]) != "e4m3")
        throw Error("unsupported", where + ": fmt " + text(q["fmt"]) + " is not supported (e4m3 is)");
    QuantizationScheme scheme;
    scheme.weights = Weights::Float8E4M3;
    scheme.ignore = ignoreList(q, where);
    return scheme;
}

const char* weightsName(Weights weights) {
    switch (weights) {
        case Weights::Int8:
            return "int8 (I8)";
        case Weights::Float8E4M3:
            return "FP8 (F8_E4M3)";
        case Weights::None:
            break;
    }
    return "none";
}

bool endsWith(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

QuantizationScheme checkQuantizationConfig(const nlohmann::json& config, const std::string& label) {
    if (!config.is_object() || !config.contains("quantization_config")) return {};
    const auto& q = config["quantization_config"];
    const auto where = label + ": quantization_config";
    if (!q.is_object()) throw Error("unsupported", where + " is not an object");
    const auto method = q.contains("quant_method") ? text(q["quant_method"]) : std::string("(none)");
    if (method == "compressed-tensors") return compressedTensors(q, where);
    if (method == "fp8") return plainFp8(q, where);
    throw Error("unsupported", where + ": quant_method " + method +
                                   " is not supported (Dragoman reads compressed-tensors int8 and FP8 checkpoints; "
                                   "dragoman-cli quantize writes them)");
}

void checkQuantizedTensors(const QuantizationScheme& scheme, const Checkpoint& checkpoint, const std::string& label) {
    for (const auto& [name, entry] : checkpoint.tensors()) {
        const auto dtype = entry.info->dtype;
        const auto where = label + ": tensor '" + name + "'";
        if (dtype == DType::F8_E5M2 || dtype == DType::F8_E8M0)
            throw Error("unsupported", where + " is " + std::string(dtypeName(dtype)) +
                                           "; Dragoman computes FP8 weights stored as F8_E4M3 (compressed-tensors float-quantized)");
        if (endsWith(name, "weight_scale_inv"))
            throw Error("unsupported",
                        where + ": block scales (weight_scale_inv) are not supported; per-channel and per-tensor scales are");
        if (endsWith(name, "weight_zero_point"))
            throw Error("unsupported", where + ": zero points (asymmetric quantization) are not supported");
        if (dtype == DType::U8 && endsWith(name, ".weight"))
            throw Error("checkpoint", where + " is U8: 8-bit weights are I8 (int8) or F8_E4M3 (FP8)");
        if (dtype != DType::I8 && dtype != DType::F8_E4M3) continue;
        if (!endsWith(name, ".weight") || entry.info->shape.size() != 2)
            throw Error("checkpoint", where + " is " + std::string(dtypeName(dtype)) + " but is not the weight of a linear layer");
        if (scheme.weights == Weights::None)
            throw Error("checkpoint", where + " is " + std::string(dtypeName(dtype)) +
                                          " but config.json has no quantization_config saying how to read it");
        const auto stored = dtype == DType::I8 ? Weights::Int8 : Weights::Float8E4M3;
        if (stored != scheme.weights)
            throw Error("checkpoint", where + " is " + std::string(dtypeName(dtype)) + " but quantization_config describes " +
                                          weightsName(scheme.weights) + " weights");
        const auto module = name.substr(0, name.size() - std::string_view(".weight").size());
        const auto* scale = checkpoint.find(module + ".weight_scale");
        if (!scale)
            throw Error("checkpoint",
                        where + " is quantized (" + std::string(dtypeName(dtype)) + ") but has no " + module + ".weight_scale");
        const auto s = scale->info->dtype;
        if (s != DType::F32 && s != DType::BF16 && s != DType::F16 && s != DType::F64)
            throw Error("checkpoint",
                        label + ": tensor '" + module + ".weight_scale' is " + std::string(dtypeName(s)) + ", not a float type");
        const auto& shape = scale->info->shape;
        const auto out = entry.info->shape[0];
        const bool channel = shape == std::vector<std::int64_t>{out, 1};
        const bool tensor = shape.empty() || shape == std::vector<std::int64_t>{1};
        if (!channel && !tensor)
            throw Error("checkpoint",
                        fmt::format("{}: tensor '{}.weight_scale' is [{}]; a scale for [{}, {}] weights is [{}, 1] (per channel) or [1] "
                                    "(per tensor)",
                                    label, module, fmt::join(shape, ","), out, entry.info->shape[1], out));
    }
}

}  // namespace dragoman
