#include "models/activation_scheme.h"

#include <string>

namespace dragoman {

bool declaresInt8ActivationsPerToken(const nlohmann::json& group) {
    if (!group.is_object() || !group.contains("input_activations") || !group["input_activations"].is_object()) return false;
    const auto& a = group["input_activations"];
    const bool integer = !a.contains("type") || (a["type"].is_string() && a["type"].get<std::string>() == "int");
    const bool eightBits = a.contains("num_bits") && a["num_bits"].is_number_integer() && a["num_bits"].get<std::int64_t>() == 8;
    const bool symmetric = !a.contains("symmetric") || (a["symmetric"].is_boolean() && a["symmetric"].get<bool>());
    const bool dynamic = a.contains("dynamic") && a["dynamic"].is_boolean() && a["dynamic"].get<bool>();
    const bool perToken = a.contains("strategy") && a["strategy"].is_string() && a["strategy"].get<std::string>() == "token";
    const bool grouped = a.contains("group_size") && !a["group_size"].is_null();
    return integer && eightBits && symmetric && dynamic && perToken && !grouped;
}

}  // namespace dragoman
