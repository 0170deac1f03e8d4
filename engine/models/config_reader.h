#pragma once
// Typed access to config.json fields with errors that name the field and the file.
#include <nlohmann/json.hpp>

#include <string>

namespace dragoman {

class ConfigReader {
public:
    ConfigReader(const nlohmann::json& json, std::string label) : json_(json), label_(std::move(label)) {}

    std::int64_t integer(const char* field) const;
    std::int64_t integer(const char* field, std::int64_t fallback) const;
    // A size (layers, heads, widths, vocabulary): an integer above zero, else unsupported().
    std::int64_t size(const char* field) const;
    double number(const char* field, double fallback) const;
    bool boolean(const char* field, bool fallback) const;
    std::string text(const char* field, const std::string& fallback) const;
    bool has(const char* field) const { return json_.contains(field) && !json_.at(field).is_null(); }
    [[noreturn]] void unsupported(const char* field, const std::string& why) const;

private:
    const nlohmann::json& json_;
    std::string label_;
};

}  // namespace dragoman
