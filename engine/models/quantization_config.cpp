#include "models/quantization_config.h"

#include "util/error.h"

namespace dragoman {
namespace {

std::string text(const nlohmann::json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
}

// One config group's weights: 8-bit symmetric integers, static, scaled per channel or per tensor.
void checkWeights(const nlohmann::json& weights, const std::string& where) {
    if (!weights.is_object()) throw Error("unsupported", where + ": no weights scheme");
    auto refuse = [&](const std::string& what) {
        throw Error("unsupported", where + ": " + what +
                                       " is not supported (Dragoman computes with symmetric 8-bit integer weights, "
                                       "one scale per output channel or per tensor)");
    };
    const auto type = weights.value("type", "int");
    if (type == "float") refuse("FP8 weights (type \"float\")");
    if (type != "int") refuse("weight type \"" + type + "\"");
    if (!weights.contains("num_bits") || !weights["num_bits"].is_number_integer() || weights["num_bits"].get<int>() != 8)
        refuse("num_bits " + (weights.contains("num_bits") ? text(weights["num_bits"]) : std::string("(missing)")));
    if (!weights.value("symmetric", true)) refuse("asymmetric quantization (zero points)");
    if (weights.contains("dynamic") && weights["dynamic"].is_boolean() && weights["dynamic"].get<bool>())
        refuse("dynamic weight quantization");
    const auto strategy = weights.contains("strategy") && weights["strategy"].is_string() ? weights["strategy"].get<std::string>() : "";
    if (strategy != "channel" && strategy != "tensor")
        refuse("strategy \"" + (strategy.empty() ? text(weights.value("strategy", nlohmann::json())) : strategy) + "\"");
    if (weights.contains("group_size") && !weights["group_size"].is_null()) refuse("group_size " + text(weights["group_size"]));
    if (weights.contains("block_structure") && !weights["block_structure"].is_null())
        refuse("block_structure " + text(weights["block_structure"]));
}

}  // namespace

void checkQuantizationConfig(const nlohmann::json& config, const std::string& label) {
    if (!config.is_object() || !config.contains("quantization_config")) return;
    const auto& q = config["quantization_config"];
    const auto where = label + ": quantization_config";
    if (!q.is_object()) throw Error("unsupported", where + " is not an object");
    const auto method = q.contains("quant_method") ? text(q["quant_method"]) : std::string("(none)");
    if (method != "compressed-tensors")
        throw Error("unsupported", where + ": quant_method " + method +
                                       " is not supported (Dragoman reads compressed-tensors int8 checkpoints; "
                                       "dragoman-cli quantize writes them)");
    const auto format = q.contains("format") ? text(q["format"]) : std::string("(none)");
    if (format == "float-quantized")
        throw Error("unsupported", where + ": format float-quantized (FP8 weights) is not supported yet; int-quantized is");
    if (format != "int-quantized") throw Error("unsupported", where + ": format " + format + " is not supported (int-quantized is)");
    if (!q.contains("config_groups") || !q["config_groups"].is_object() || q["config_groups"].empty())
        throw Error("unsupported", where + ": no config_groups");
    for (const auto& [name, group] : q["config_groups"].items()) {
        const auto groupWhere = where + ".config_groups." + name;
        if (!group.is_object()) throw Error("unsupported", groupWhere + " is not an object");
        const auto targets = group.value("targets", nlohmann::json::array());
        if (targets != nlohmann::json::array({"Linear"}))
            throw Error("unsupported", groupWhere + ": targets " + targets.dump() + " (only [\"Linear\"] is supported)");
        checkWeights(group.value("weights", nlohmann::json()), groupWhere + ".weights");
        // Activation scales (static or dynamic) only matter where activations are quantized too; the CPU kernels
        // keep activations in float32, so they are ignored.
    }
}

}  // namespace dragoman
