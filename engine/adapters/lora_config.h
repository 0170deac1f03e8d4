#pragma once
// adapter_config.json of a PEFT LoRA adapter, with PEFT's rules for which modules it targets and with what
// rank and scaling (peft.tuners.lora, 0.18): target_modules as a list (a module's name equals an entry or
// ends with "." + entry) or a regex string (re.fullmatch), exclude_modules likewise, layers_to_transform by the
// layer index in the name, rank_pattern / alpha_pattern keys matching the end of a name, scaling
// lora_alpha / r (use_rslora: lora_alpha / sqrt(r)). A field that would change the math and is not implemented
// (use_dora, lora_bias, modules_to_save, fan_in_fan_out, another peft_type, ...) is refused by name.
#include <nlohmann/json.hpp>

#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>

namespace dragoman {

struct LoraConfig {
    std::int64_t r = 8;
    double alpha = 8;
    bool rslora = false;
    std::vector<std::string> targetList;     // target_modules as a list
    std::optional<std::string> targetRegex;  // or as a regex string
    std::vector<std::string> excludeList;
    std::optional<std::string> excludeRegex;
    std::vector<std::int64_t> layers;  // layers_to_transform (empty: all)
    std::optional<std::string> layersPattern;
    std::vector<std::pair<std::string, std::int64_t>> rankPattern;
    std::vector<std::pair<std::string, double>> alphaPattern;
    std::string baseModel, taskType;

    // Throws Error("adapter") naming the field.
    static LoraConfig parse(const nlohmann::json& json, const std::string& label);

    bool targets(const std::string& module) const;
    std::int64_t rankOf(const std::string& module) const;
    double scalingOf(const std::string& module) const;
};

}  // namespace dragoman
