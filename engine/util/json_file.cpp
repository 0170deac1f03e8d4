#include "util/json_file.h"

#include "util/error.h"
#include "util/regular_file.h"

#include <cmath>
#include <fstream>
#include <limits>

namespace dragoman {

nlohmann::json readJsonObject(const std::filesystem::path& path, const std::string& category, bool missingIsEmpty) {
    requireRegularFile(path);
    std::ifstream in(path);
    if (!in) {
        if (missingIsEmpty) return nlohmann::json::object();
        throw Error(category, path.string() + ": cannot open");
    }
    nlohmann::json json;
    try {
        json = nlohmann::json::parse(in);
    } catch (const nlohmann::json::exception& e) {
        throw Error(category, path.string() + ": not valid JSON: " + e.what());
    }
    if (!json.is_object()) throw Error(category, path.string() + ": not a JSON object");
    return json;
}

void writeJsonFile(const std::filesystem::path& path, const nlohmann::ordered_json& json, int indent) {
    std::ofstream out(path, std::ios::trunc);
    out << json.dump(indent) << "\n";
    if (!out) throw Error("io", path.string() + ": cannot write");
}

std::int64_t jsonInteger(const nlohmann::json& value, const std::string& what, const std::string& category) {
    constexpr auto largest = std::numeric_limits<std::int64_t>::max();
    if (value.is_number_unsigned() && value.get<std::uint64_t>() > static_cast<std::uint64_t>(largest))
        throw Error(category, what + " is too large");
    if (value.is_number_integer()) return value.get<std::int64_t>();
    if (value.is_number_float()) {
        // Floats past 2^53 are not exact integers any more; below it a float with no fraction is the integer it names.
        constexpr double exactLimit = 9007199254740992.0;
        const double d = value.get<double>();
        if (std::isfinite(d) && std::trunc(d) == d && std::fabs(d) < exactLimit) return static_cast<std::int64_t>(d);
    }
    throw Error(category, what + " must be an integer (it is " + value.dump() + ")");
}

std::vector<std::int64_t> jsonIntegers(const nlohmann::json& value, const std::string& what, const std::string& category) {
    if (!value.is_array()) return {jsonInteger(value, what, category)};
    std::vector<std::int64_t> out;
    out.reserve(value.size());
    for (const auto& item : value)
        out.push_back(jsonInteger(item, what, category));
    return out;
}

}  // namespace dragoman
