#include "util/json_file.h"

#include "util/error.h"

#include <fstream>

namespace dragoman {

nlohmann::json readJsonObject(const std::filesystem::path& path, const std::string& category, bool missingIsEmpty) {
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

}  // namespace dragoman
