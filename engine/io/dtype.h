#pragma once
// The element types a safetensors file may hold (every dtype of the format's specification), with their
// on-disk names and sizes. F4 and F6_* pack several elements into a byte: their sizes are in bits.
#include <cstddef>
#include <optional>
#include <string_view>

namespace dragoman {

enum class DType {
    F64,
    F32,
    F16,
    BF16,
    I64,
    I32,
    I16,
    I8,
    U64,
    U32,
    U16,
    U8,
    Bool,
    F8_E4M3,  // float8 e4m3fn: 4 exponent bits, 3 mantissa bits, no infinities (compressed-tensors FP8)
    F8_E5M2,
    F8_E8M0,  // an exponent only (MX block scales)
    F6_E2M3,
    F6_E3M2,
    F4,  // float4 e2m1
};

std::optional<DType> dtypeFromName(std::string_view name);
// Whether any model computes with tensors of this type: not the unsigned integers past 8 bits, nor the sub-byte floats.
bool computedWith(DType dtype);
std::string_view dtypeName(DType dtype);
std::size_t dtypeBits(DType dtype);
// Bytes per element; 1 for the sub-byte types (their tensors are read as bytes).
std::size_t dtypeSize(DType dtype);

}  // namespace dragoman
