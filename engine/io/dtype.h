#pragma once
// The element types a safetensors file may hold, with their on-disk names and sizes.
#include <cstddef>
#include <optional>
#include <string_view>

namespace dragoman {

enum class DType { F64, F32, F16, BF16, I64, I32, I8, U8, Bool };

std::optional<DType> dtypeFromName(std::string_view name);
std::string_view dtypeName(DType dtype);
std::size_t dtypeSize(DType dtype);

}  // namespace dragoman
