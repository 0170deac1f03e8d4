#pragma once
// The one exception type the engine throws. It carries a machine-readable category (the CLI prints
// "error: <category>: <detail>") and a detail that names the file, tensor, offset or field involved.
#include <stdexcept>
#include <string>

namespace dragoman {

class Error : public std::runtime_error {
public:
    Error(std::string category, std::string detail)
        : std::runtime_error(category + ": " + detail), category_(std::move(category)), detail_(std::move(detail)) {}

    const std::string& category() const noexcept { return category_; }
    const std::string& detail() const noexcept { return detail_; }

private:
    std::string category_;
    std::string detail_;
};

// Thrown when a progress callback asked to stop; never an error the user needs to see as a failure.
class Cancelled : public Error {
public:
    explicit Cancelled(std::string what) : Error("cancelled", std::move(what)) {}
};

}  // namespace dragoman
