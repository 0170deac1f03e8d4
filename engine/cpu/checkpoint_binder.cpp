#include "cpu/checkpoint_binder.h"

#include "kernels/bf16.h"
#include "util/error.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace dragoman::cpu {
namespace {

// IEEE binary16 -> float32, exact (subnormals, infinities and NaNs included).
float widenHalf(std::uint16_t h) {
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000) << 16;
    const int exponent = (h >> 10) & 0x1F;
    const std::uint32_t mantissa = h & 0x3FF;
    float magnitude;
    if (exponent == 0)
        magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    else if (exponent == 31)
        magnitude = mantissa ? std::numeric_limits<float>::quiet_NaN() : std::numeric_limits<float>::infinity();
    else
        magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
    std::uint32_t bits;
    std::memcpy(&bits, &magnitude, sizeof bits);
    bits |= sign;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

bool aligned(const void* p, std::size_t alignment) {
    return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

std::string shapeText(const std::vector<std::int64_t>& shape) {
    return fmt::format("[{}]", fmt::join(shape, ","));
}

}  // namespace

const Checkpoint::Entry* CheckpointBinder::take(const std::string& name, const std::vector<std::int64_t>& shape) {
    const auto* entry = checkpoint_.find(name);
    if (!entry) {
        missing_.push_back(name);
        return nullptr;
    }
    used_.insert(name);
    if (entry->info->shape != shape) {
        misshapen_.push_back(fmt::format("{} is {}, expected {}", name, shapeText(entry->info->shape), shapeText(shape)));
        return nullptr;
    }
    return entry;
}

const float* CheckpointBinder::floats(const Checkpoint::Entry& entry) {
    const auto bytes = entry.file->bytes(*entry.info);
    const auto n = static_cast<std::size_t>(entry.info->numel);
    const auto dtype = entry.info->dtype;
    if (dtype == DType::F32 && aligned(bytes.data(), alignof(float))) return reinterpret_cast<const float*>(bytes.data());
    auto copy = std::shared_ptr<float[]>(new float[std::max<std::size_t>(n, 1)]);
    for (std::size_t i = 0; i < n; ++i) {
        const auto* at = bytes.data() + i * dtypeSize(dtype);
        if (dtype == DType::F32) {
            std::memcpy(&copy[i], at, sizeof(float));
        } else if (dtype == DType::F64) {
            double d;
            std::memcpy(&d, at, sizeof d);
            copy[i] = static_cast<float>(d);
        } else {
            std::uint16_t v;
            std::memcpy(&v, at, sizeof v);
            copy[i] = dtype == DType::F16 ? widenHalf(v) : kernels::widen(v);
        }
    }
    copiedBytes_ += n * sizeof(float);
    ++copiedTensors_;
    const float* data = copy.get();
    copies_.push_back(std::move(copy));
    return data;
}

Matrix CheckpointBinder::matrix(const std::string& name, std::int64_t rows, std::int64_t cols, bool table) {
    Matrix m;
    m.rows = rows;
    m.cols = cols;
    const auto* entry = take(name, {rows, cols});
    const auto* scaleEntry = checkpoint_.find(name + "_scale");
    if (scaleEntry) used_.insert(name + "_scale");
    if (!entry) return m;
    const auto dtype = entry->info->dtype;
    const auto bytes = entry->file->bytes(*entry->info);
    const bool eightBit = dtype == DType::I8 || dtype == DType::F8_E4M3;
    if (eightBit) {
        m.data = bytes.data();
        m.type = dtype == DType::I8 ? Dtype::I8 : Dtype::FP8;
    } else if (dtype == DType::BF16 && aligned(bytes.data(), 2)) {
        m.data = bytes.data();
        m.type = Dtype::BF16;
    } else if (dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16 || dtype == DType::F64) {
        m.data = floats(*entry);
        m.type = Dtype::F32;
    } else {
        misshapen_.push_back(fmt::format("{} is {}; weights are F32, BF16, F16, I8 or F8_E4M3", name, dtypeName(dtype)));
        return m;
    }
    if (!scaleEntry) {
        if (eightBit) misshapen_.push_back(name + " is 8-bit but has no " + name + "_scale");
        return m;
    }
    const auto& shape = scaleEntry->info->shape;
    if (shape != std::vector<std::int64_t>{rows, 1} && shape != std::vector<std::int64_t>{1} && !shape.empty()) {
        misshapen_.push_back(fmt::format("{}_scale is {}, expected one of [{},1] or [1] or []", name, shapeText(shape), rows));
        return m;
    }
    const auto sdtype = scaleEntry->info->dtype;
    if (sdtype != DType::F32 && sdtype != DType::BF16 && sdtype != DType::F16 && sdtype != DType::F64) {
        misshapen_.push_back(fmt::format("{}_scale is {}; scales are F32, BF16, F16 or F64", name, dtypeName(sdtype)));
        return m;
    }
    if (table && !eightBit) {
        misshapen_.push_back(name + "_scale scales " + name + ", which is not an 8-bit table");
        return m;
    }
    m.scale = floats(*scaleEntry);
    m.scalePerTensor = scaleEntry->info->numel == 1;
    return m;
}

const float* CheckpointBinder::floats(const std::string& name, const std::vector<std::int64_t>& shape) {
    const auto* entry = take(name, shape);
    if (!entry) return nullptr;
    const auto dtype = entry->info->dtype;
    if (dtype != DType::F32 && dtype != DType::BF16 && dtype != DType::F16 && dtype != DType::F64) {
        misshapen_.push_back(fmt::format("{} is {}; F32, BF16, F16 or F64 expected", name, dtypeName(dtype)));
        return nullptr;
    }
    return floats(*entry);
}

void CheckpointBinder::acceptCopy(const std::string& name, const std::string& original) {
    const auto* copy = checkpoint_.find(name);
    if (!copy) return;
    used_.insert(name);
    const auto* of = checkpoint_.find(original);
    const bool same = of && copy->info->shape == of->info->shape && copy->info->dtype == of->info->dtype && [&] {
        const auto a = copy->file->bytes(*copy->info), b = of->file->bytes(*of->info);
        return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size()) == 0;
    }();
    if (!same) misshapen_.push_back(name + " is stored but differs from the tensor it must equal");
}

void CheckpointBinder::acceptCopy(const std::string& name, const std::vector<float>& values, const std::vector<std::int64_t>& shape) {
    const auto* copy = checkpoint_.find(name);
    if (!copy) return;
    used_.insert(name);
    const auto dtype = copy->info->dtype;
    bool same = copy->info->shape == shape && static_cast<std::size_t>(copy->info->numel) == values.size() &&
                (dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16 || dtype == DType::F64);
    if (same) {
        const auto bytes = copy->file->bytes(*copy->info);
        for (std::size_t i = 0; i < values.size() && same; ++i) {
            const auto* at = bytes.data() + i * dtypeSize(dtype);
            if (dtype == DType::F32) {
                float f;
                std::memcpy(&f, at, sizeof f);
                same = f == values[i];
            } else if (dtype == DType::F64) {
                double d;
                std::memcpy(&d, at, sizeof d);
                same = static_cast<float>(d) == values[i];
            } else {
                std::uint16_t v;
                std::memcpy(&v, at, sizeof v);
                same = dtype == DType::BF16 ? v == kernels::narrowToBf16(values[i])
                                            : widenHalf(v) == static_cast<float>(static_cast<_Float16>(values[i]));
            }
        }
    }
    if (!same) misshapen_.push_back(name + " is stored but differs from the tensor it must equal");
}

NormWeight CheckpointBinder::norm(const std::string& name, std::int64_t dim) {
    const auto* entry = take(name, {dim});
    if (!entry) return {};
    const auto bytes = entry->file->bytes(*entry->info);
    const auto dtype = entry->info->dtype;
    if (dtype == DType::BF16 && aligned(bytes.data(), 2)) return {bytes.data(), Dtype::BF16};
    if (dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16 || dtype == DType::F64) return {floats(*entry), Dtype::F32};
    misshapen_.push_back(fmt::format("{} is {}; norm weights are F32, BF16, F16 or F64", name, dtypeName(dtype)));
    return {};
}

BoundMemory CheckpointBinder::release() {
    BoundMemory memory{std::move(copies_), copiedTensors_, copiedBytes_};
    for (const auto& file : checkpoint_.files())
        memory.keep.push_back(file);
    copiedTensors_ = copiedBytes_ = 0;
    return memory;
}

void CheckpointBinder::finish(const std::string& modelId) const {
    std::vector<std::string> unexpected;
    for (const auto& [name, entry] : checkpoint_.tensors())
        if (!used_.count(name)) unexpected.push_back(name);
    throwBindingProblems(modelId, missing_, misshapen_, unexpected);
}

std::int64_t bytesOf(const Matrix& m) {
    const std::int64_t element = m.type == Dtype::F32 ? 4 : m.type == Dtype::BF16 ? 2 : 1;
    const std::int64_t scales = m.scale ? (m.scalePerTensor ? 1 : m.rows) * 4 : 0;
    return m.rows * m.cols * element + scales;
}

std::int64_t bytesOf(const NormWeight& w, std::int64_t dim) {
    if (!w.data) return 0;
    return dim * (w.type == Dtype::BF16 ? 2 : 4);
}

void throwBindingProblems(const std::string& modelId, const std::vector<std::string>& missing, const std::vector<std::string>& misshapen,
                          const std::vector<std::string>& unexpected) {
    if (missing.empty() && misshapen.empty() && unexpected.empty()) return;
    std::string text = modelId + ":";
    auto list = [](const std::vector<std::string>& names) {
        const std::size_t shown = std::min<std::size_t>(names.size(), 8);
        std::string out = fmt::format("{}", fmt::join(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(shown), ", "));
        if (names.size() > shown) out += fmt::format(" and {} more", names.size() - shown);
        return out;
    };
    if (!missing.empty()) text += " missing keys: " + list(missing) + ";";
    if (!misshapen.empty()) text += " wrong tensors: " + list(misshapen) + ";";
    if (!unexpected.empty()) text += " unexpected keys: " + list(unexpected) + ";";
    text.pop_back();
    throw Error("checkpoint", text);
}

}  // namespace dragoman::cpu
