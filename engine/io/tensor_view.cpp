#include "io/tensor_view.h"

#include "util/error.h"
#include "util/log.h"

#include <cstring>

namespace dragoman {

std::optional<c10::ScalarType> torchType(DType dtype) {
    if (!computedWith(dtype)) return std::nullopt;
    switch (dtype) {
        case DType::F64:
            return torch::kFloat64;
        case DType::F32:
            return torch::kFloat32;
        case DType::F16:
            return torch::kFloat16;
        case DType::BF16:
            return torch::kBFloat16;
        case DType::I64:
            return torch::kInt64;
        case DType::I32:
            return torch::kInt32;
        case DType::I16:
            return torch::kInt16;
        case DType::I8:
            return torch::kInt8;
        case DType::U8:
        case DType::F8_E4M3:
        case DType::F8_E5M2:
        case DType::F8_E8M0:
            return torch::kUInt8;
        case DType::Bool:
            return torch::kBool;
        default:
            return std::nullopt;
    }
    return std::nullopt;
}

torch::Tensor mappedTensor(const std::shared_ptr<const SafetensorsFile>& file, const TensorInfo& info, CopyCounter* copies) {
    const auto type = torchType(info.dtype);
    if (!type)
        throw Error("unsupported", "tensor '" + info.name + "' of " + file->path().string() + " is " + std::string(dtypeName(info.dtype)) +
                                       ", which no Dragoman model computes with");
    const auto options = torch::TensorOptions().dtype(*type).device(torch::kCPU);
    auto bytes = file->bytes(info);
    const auto address = reinterpret_cast<std::uintptr_t>(bytes.data());
    if (info.numel == 0) return torch::empty(info.shape, options);
    if (address % dtypeSize(info.dtype) == 0) {
        // The mapping is read-only: inference never writes to weights, and a stray write faults loudly
        // instead of corrupting the page cache.
        return torch::from_blob(
            const_cast<std::byte*>(bytes.data()), info.shape, [keep = file](void*) {}, options);
    }
    auto copy = torch::empty(info.shape, options);
    std::memcpy(copy.data_ptr(), bytes.data(), bytes.size());
    if (copies) {
        copies->tensors.fetch_add(1);
        copies->bytes.fetch_add(bytes.size());
    }
    log::logger().info("copied tensor '{}' of {} ({} bytes): data misaligned for {}", info.name, file->path().string(), bytes.size(),
                       dtypeName(info.dtype));
    return copy;
}

std::map<std::string, torch::Tensor, std::less<>> tensorsOf(const Checkpoint& checkpoint, CopyCounter* copies) {
    std::map<std::string, torch::Tensor, std::less<>> tensors;
    for (const auto& [name, tensor] : checkpoint.tensors())
        tensors.emplace(name, mappedTensor(tensor.file, *tensor.info, copies));
    return tensors;
}

}  // namespace dragoman
