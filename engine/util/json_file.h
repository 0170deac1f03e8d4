#pragma once
// Reads a JSON object from a file, with errors that name the file.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace dragoman {

// Throws Error(category) when the file is missing (unless `missingIsEmpty`), is not JSON, or is not an object.
nlohmann::json readJsonObject(const std::filesystem::path& path, const std::string& category, bool missingIsEmpty = false);
// Writes `json` indented by `indent`, with a final newline; throws Error("io") when it cannot.
void writeJsonFile(const std::filesystem::path& path, const nlohmann::ordered_json& json, int indent);

// An integer a user's file gives (`what` names it in the error). nlohmann's get<std::int64_t>() casts a float such as
// 1e300 with undefined behaviour, so only integers in range and floats with an exact integer value are read; anything
// else throws Error(category).
std::int64_t jsonInteger(const nlohmann::json& value, const std::string& what, const std::string& category);
// A list of such integers (or one integer, read as a list of one).
std::vector<std::int64_t> jsonIntegers(const nlohmann::json& value, const std::string& what, const std::string& category);

}  // namespace dragoman
