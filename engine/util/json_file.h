#pragma once
// Reads a JSON object from a file, with errors that name the file.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace dragoman {

// Throws Error(category) when the file is missing (unless `missingIsEmpty`), is not JSON, or is not an object.
nlohmann::json readJsonObject(const std::filesystem::path& path, const std::string& category, bool missingIsEmpty = false);
// Writes `json` indented by `indent`, with a final newline; throws Error("io") when it cannot.
void writeJsonFile(const std::filesystem::path& path, const nlohmann::ordered_json& json, int indent);

}  // namespace dragoman
