#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace dragoman {

// A tensor's key and shape, in the order a network takes it.
using ParameterLayout = std::vector<std::pair<std::string, std::vector<std::int64_t>>>;

}  // namespace dragoman
