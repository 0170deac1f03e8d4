#include "adapters/lora_config.h"

#include "util/error.h"
#include "util/json_file.h"

#include <cmath>

namespace dragoman {
namespace {

bool isDefault(const nlohmann::json& v) {
    return v.is_null() || (v.is_boolean() && !v.get<bool>()) || (v.is_object() && v.empty()) || (v.is_array() && v.empty()) ||
           (v.is_number() && v.get<double>() == 0) || (v.is_string() && v.get<std::string>().empty());
}

bool listMatches(const std::vector<std::string>& list, const std::string& module) {
    for (const auto& t : list)
        if (module == t || (module.size() > t.size() && module.ends_with(t) && module[module.size() - t.size() - 1] == '.')) return true;
    return false;
}

// PEFT's get_pattern_key: the first key k with re.match(r"(.*\.)?(k)$", module).
template <typename Value>
const Value* patternValue(const std::vector<std::pair<std::string, Value>>& patterns, const std::string& module) {
    for (const auto& [key, value] : patterns)
        if (std::regex_match(module, std::regex("(.*\\.)?(" + key + ")"))) return &value;
    return nullptr;
}

}  // namespace

LoraConfig LoraConfig::parse(const nlohmann::json& json, const std::string& label) {
    auto refuse = [&](const std::string& field, const std::string& why) -> Error {
        return Error("adapter", label + ": " + field + " " + why);
    };
    if (!json.is_object()) throw refuse("adapter_config.json", "is not a JSON object");
    LoraConfig c;
    try {
        const auto type = json.value("peft_type", std::string("LORA"));
        if (type != "LORA") throw refuse("peft_type", "'" + type + "' is not supported (LoRA only)");
        if (json.value("bias", std::string("none")) != "none") throw refuse("bias", "other than \"none\" is not supported");
        // Fields that change the math when set; Dragoman implements plain LoRA (optionally rsLoRA).
        for (const char* field : {"use_dora", "lora_bias", "modules_to_save", "fan_in_fan_out", "layer_replication", "use_qalora",
                                  "trainable_token_indices", "target_parameters", "alora_invocation_tokens", "arrow_config",
                                  "megatron_config", "loftq_config", "eva_config", "corda_config"})
            if (json.contains(field) && !isDefault(json[field])) throw refuse(field, "is set, and is not supported");
        if (json.contains("r") && !json["r"].is_null()) c.r = jsonInteger(json["r"], label + ": r", "adapter");
        c.alpha = json.value("lora_alpha", 8.0);
        c.rslora = json.value("use_rslora", false);
        if (c.r <= 0) throw refuse("r", "must be positive");
        const auto& targets = json.contains("target_modules") ? json["target_modules"] : nlohmann::json();
        if (targets.is_string())
            c.targetRegex = targets.get<std::string>();
        else if (targets.is_array())
            c.targetList = targets.get<std::vector<std::string>>();
        else
            throw refuse("target_modules", "must be a list or a regex string");
        if (json.contains("exclude_modules") && !json["exclude_modules"].is_null()) {
            if (json["exclude_modules"].is_string())
                c.excludeRegex = json["exclude_modules"].get<std::string>();
            else
                c.excludeList = json["exclude_modules"].get<std::vector<std::string>>();
        }
        if (json.contains("layers_to_transform") && !json["layers_to_transform"].is_null()) {
            const auto& layers = json["layers_to_transform"];
            c.layers = jsonIntegers(layers, label + ": layers_to_transform", "adapter");
        }
        if (json.contains("layers_pattern") && !json["layers_pattern"].is_null()) {
            const auto& p = json["layers_pattern"];
            if (!p.is_string()) throw refuse("layers_pattern", "as a list is not supported");
            c.layersPattern = p.get<std::string>();
        }
        const auto ranks = json.value("rank_pattern", nlohmann::json::object());
        const auto alphas = json.value("alpha_pattern", nlohmann::json::object());
        for (const auto& [key, value] : ranks.items())
            c.rankPattern.emplace_back(key, jsonInteger(value, label + ": rank_pattern." + key, "adapter"));
        for (const auto& [key, value] : alphas.items())
            c.alphaPattern.emplace_back(key, value.get<double>());
        if (json.contains("base_model_name_or_path") && json["base_model_name_or_path"].is_string())
            c.baseModel = json["base_model_name_or_path"].get<std::string>();
        if (json.contains("task_type") && json["task_type"].is_string()) c.taskType = json["task_type"].get<std::string>();
        // The patterns must be valid regular expressions before any module is matched.
        if (c.targetRegex) std::regex(*c.targetRegex);
        if (c.excludeRegex) std::regex(*c.excludeRegex);
        for (const auto& [key, value] : c.rankPattern)
            std::regex("(.*\\.)?(" + key + ")");
        for (const auto& [key, value] : c.alphaPattern)
            std::regex("(.*\\.)?(" + key + ")");
    } catch (const nlohmann::json::exception& e) {
        throw Error("adapter", label + ": a field has the wrong type (" + std::string(e.what()) + ")");
    } catch (const std::regex_error& e) {
        throw Error("adapter", label + ": a module pattern is not a valid regular expression (" + std::string(e.what()) + ")");
    }
    return c;
}

bool LoraConfig::targets(const std::string& module) const {
    const bool wanted = targetRegex ? std::regex_match(module, std::regex(*targetRegex)) : listMatches(targetList, module);
    if (!wanted) return false;
    if (excludeRegex ? std::regex_match(module, std::regex(*excludeRegex)) : listMatches(excludeList, module)) return false;
    if (layers.empty()) return true;
    // PEFT: the layer index is the number after "<layers_pattern>." (default: any name followed by a number).
    std::smatch m;
    const std::regex index(layersPattern ? ".*\\." + *layersPattern + "\\.(\\d+)\\." : ".*\\.[^.]*\\.(\\d+)\\.");
    if (!std::regex_search(module, m, index) || m.position(0) != 0) return false;
    const auto layer = std::stoll(m[1].str());
    return std::find(layers.begin(), layers.end(), layer) != layers.end();
}

std::int64_t LoraConfig::rankOf(const std::string& module) const {
    const auto* p = patternValue(rankPattern, module);
    return p ? *p : r;
}

double LoraConfig::scalingOf(const std::string& module) const {
    const auto* p = patternValue(alphaPattern, module);
    const double a = p ? *p : alpha;
    const auto rank = static_cast<double>(rankOf(module));
    return rslora ? a / std::sqrt(rank) : a / rank;
}

}  // namespace dragoman
