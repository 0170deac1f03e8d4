#include "models/config_reader.h"

#include "util/error.h"

namespace dragoman {

std::int64_t ConfigReader::integer(const char* field) const {
    if (!has(field)) throw Error("config", label_ + ": missing field '" + field + "'");
    const auto& value = json_.at(field);
    if (!value.is_number_integer()) throw Error("config", label_ + ": field '" + field + "' must be an integer");
    return value.get<std::int64_t>();
}

std::int64_t ConfigReader::integer(const char* field, std::int64_t fallback) const {
    return has(field) ? integer(field) : fallback;
}

double ConfigReader::number(const char* field, double fallback) const {
    if (!has(field)) return fallback;
    if (!json_.at(field).is_number()) throw Error("config", label_ + ": field '" + field + "' must be a number");
    return json_.at(field).get<double>();
}

bool ConfigReader::boolean(const char* field, bool fallback) const {
    if (!has(field)) return fallback;
    if (!json_.at(field).is_boolean()) throw Error("config", label_ + ": field '" + field + "' must be true or false");
    return json_.at(field).get<bool>();
}

std::string ConfigReader::text(const char* field, const std::string& fallback) const {
    if (!has(field)) return fallback;
    if (!json_.at(field).is_string()) throw Error("config", label_ + ": field '" + field + "' must be a string");
    return json_.at(field).get<std::string>();
}

std::int64_t ConfigReader::size(const char* field) const {
    const auto value = integer(field);
    if (value <= 0) unsupported(field, "must be a positive number");
    return value;
}

void ConfigReader::unsupported(const char* field, const std::string& why) const {
    throw Error("config", label_ + ": unsupported '" + field + "': " + why);
}

}  // namespace dragoman
