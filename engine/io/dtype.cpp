#include "io/dtype.h"

#include <array>

namespace dragoman {
namespace {

struct DTypeRow {
    DType dtype;
    std::string_view name;
    std::size_t size;
};

constexpr std::array<DTypeRow, 9> kTable{{
    {DType::F64, "F64", 8},
    {DType::F32, "F32", 4},
    {DType::F16, "F16", 2},
    {DType::BF16, "BF16", 2},
    {DType::I64, "I64", 8},
    {DType::I32, "I32", 4},
    {DType::I8, "I8", 1},
    {DType::U8, "U8", 1},
    {DType::Bool, "BOOL", 1},
}};

}  // namespace

std::optional<DType> dtypeFromName(std::string_view name) {
    for (const auto& row : kTable)
        if (row.name == name) return row.dtype;
    return std::nullopt;
}

std::string_view dtypeName(DType dtype) {
    return kTable[static_cast<std::size_t>(dtype)].name;
}

std::size_t dtypeSize(DType dtype) {
    return kTable[static_cast<std::size_t>(dtype)].size;
}

}  // namespace dragoman
