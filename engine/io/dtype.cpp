#include "io/dtype.h"

#include <array>

namespace dragoman {
namespace {

struct DTypeRow {
    DType dtype;
    std::string_view name;
    std::size_t bits;
};

constexpr std::array<DTypeRow, 19> kTable{{
    {DType::F64, "F64", 64},        {DType::F32, "F32", 32},        {DType::F16, "F16", 16},        {DType::BF16, "BF16", 16},
    {DType::I64, "I64", 64},        {DType::I32, "I32", 32},        {DType::I16, "I16", 16},        {DType::I8, "I8", 8},
    {DType::U64, "U64", 64},        {DType::U32, "U32", 32},        {DType::U16, "U16", 16},        {DType::U8, "U8", 8},
    {DType::Bool, "BOOL", 8},       {DType::F8_E4M3, "F8_E4M3", 8}, {DType::F8_E5M2, "F8_E5M2", 8}, {DType::F8_E8M0, "F8_E8M0", 8},
    {DType::F6_E2M3, "F6_E2M3", 6}, {DType::F6_E3M2, "F6_E3M2", 6}, {DType::F4, "F4", 4},
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

std::size_t dtypeBits(DType dtype) {
    return kTable[static_cast<std::size_t>(dtype)].bits;
}

std::size_t dtypeSize(DType dtype) {
    const auto bits = dtypeBits(dtype);
    return bits >= 8 ? bits / 8 : 1;
}

bool computedWith(DType dtype) {
    switch (dtype) {
        case DType::U64:
        case DType::U32:
        case DType::U16:
        case DType::F6_E2M3:
        case DType::F6_E3M2:
        case DType::F4:
            return false;
        default:
            return true;
    }
}

}  // namespace dragoman
