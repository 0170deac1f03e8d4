#include "io/safetensors.h"

#include "util/error.h"

#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <set>

namespace dragoman {
namespace {

[[noreturn]] void fail(std::string_view category, std::string_view label, const std::string& detail) {
    throw Error(std::string(category), std::string(label) + ": " + detail);
}

std::uint64_t readLittleEndian64(const std::byte* p) {
    std::uint64_t value = 0;
    for (int i = 7; i >= 0; --i)
        value = (value << 8) | static_cast<std::uint8_t>(p[i]);
    return value;
}

std::vector<std::int64_t> parseShape(simdjson::dom::element shapeElement, std::string_view label, const std::string& name,
                                     std::uint64_t& numel) {
    simdjson::dom::array dims;
    if (shapeElement.get_array().get(dims)) fail("header_schema", label, "tensor '" + name + "': shape is not a list");
    std::vector<std::int64_t> shape;
    numel = 1;
    for (simdjson::dom::element dim : dims) {
        std::int64_t value = 0;
        if (dim.is_int64()) {
            value = dim.get_int64().value_unsafe();
        } else if (dim.is_uint64()) {
            fail("shape", label, "tensor '" + name + "': dimension too large");
        } else {
            fail("shape", label, "tensor '" + name + "': dimension " + simdjson::to_string(dim) + " is not an integer");
        }
        if (value < 0) fail("shape", label, "tensor '" + name + "': negative dimension " + std::to_string(value));
        if (__builtin_mul_overflow(numel, static_cast<std::uint64_t>(value), &numel))
            fail("shape", label, "tensor '" + name + "': element count overflows 64 bits");
        shape.push_back(value);
    }
    return shape;
}

TensorInfo parseEntry(std::string_view key, simdjson::dom::element entry, std::string_view label) {
    TensorInfo info;
    info.name = std::string(key);
    simdjson::dom::object fields;
    if (entry.get_object().get(fields)) fail("header_schema", label, "tensor '" + info.name + "' is not an object");

    std::string_view dtypeText;
    if (fields["dtype"].get_string().get(dtypeText))
        fail("header_schema", label, "tensor '" + info.name + "': missing or non-string 'dtype'");
    auto dtype = dtypeFromName(dtypeText);
    if (!dtype) fail("dtype", label, "tensor '" + info.name + "': unknown dtype '" + std::string(dtypeText) + "'");
    info.dtype = *dtype;

    simdjson::dom::element shapeElement;
    if (fields["shape"].get(shapeElement)) fail("header_schema", label, "tensor '" + info.name + "': missing 'shape'");
    info.shape = parseShape(shapeElement, label, info.name, info.numel);

    simdjson::dom::array offsets;
    if (fields["data_offsets"].get_array().get(offsets))
        fail("header_schema", label, "tensor '" + info.name + "': missing or non-list 'data_offsets'");
    std::vector<std::uint64_t> values;
    for (simdjson::dom::element v : offsets) {
        std::uint64_t x = 0;
        if (v.get_uint64().get(x)) fail("header_schema", label, "tensor '" + info.name + "': data_offsets must be non-negative integers");
        values.push_back(x);
    }
    if (values.size() != 2)
        fail("header_schema", label, "tensor '" + info.name + "': data_offsets has " + std::to_string(values.size()) + " elements, not 2");
    info.begin = values[0];
    info.end = values[1];
    if (info.begin > info.end)
        fail("offsets", label,
             "tensor '" + info.name + "': data_offsets [" + std::to_string(info.begin) + ", " + std::to_string(info.end) +
                 "] begin after end");

    std::uint64_t nbits = 0;
    if (__builtin_mul_overflow(info.numel, dtypeBits(info.dtype), &nbits))
        fail("shape", label, "tensor '" + info.name + "': byte size overflows 64 bits");
    if (nbits % 8 != 0)
        fail("shape", label,
             "tensor '" + info.name + "': " + std::to_string(info.numel) + " " + std::string(dtypeText) +
                 " elements do not fill whole bytes");
    const std::uint64_t nbytes = nbits / 8;
    if (nbytes != info.end - info.begin)
        fail("size_mismatch", label,
             "tensor '" + info.name + "': " + std::string(dtypeText) + " shape needs " + std::to_string(nbytes) +
                 " bytes but data_offsets span " + std::to_string(info.end - info.begin));
    return info;
}

std::map<std::string, std::string> parseMetadata(simdjson::dom::element value, std::string_view label) {
    simdjson::dom::object object;
    if (value.get_object().get(object)) fail("header_schema", label, "__metadata__ is not an object");
    std::map<std::string, std::string> metadata;
    for (auto field : object) {
        std::string_view text;
        if (field.value.get_string().get(text))
            fail("header_schema", label, "__metadata__ value of '" + std::string(field.key) + "' is not a string");
        metadata.emplace(std::string(field.key), std::string(text));
    }
    return metadata;
}

// The data section must be covered exactly: no overlap, no hole, nothing past the end, nothing left over.
void checkLayout(std::vector<TensorInfo>& tensors, std::uint64_t dataSize, std::string_view label) {
    std::sort(tensors.begin(), tensors.end(),
              [](const TensorInfo& a, const TensorInfo& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
    std::uint64_t cursor = 0;
    const TensorInfo* previous = nullptr;
    for (const auto& t : tensors) {
        if (t.end > dataSize)
            fail("offsets", label,
                 "tensor '" + t.name + "' ends at byte " + std::to_string(t.end) + " of a " + std::to_string(dataSize) +
                     "-byte data section");
        if (t.begin < cursor) fail("offsets", label, "tensor '" + t.name + "' overlaps '" + (previous ? previous->name : "") + "'");
        if (t.begin > cursor)
            fail("offsets", label,
                 "unused bytes [" + std::to_string(cursor) + ", " + std::to_string(t.begin) + ") before tensor '" + t.name + "'");
        cursor = t.end;
        previous = &t;
    }
    if (cursor != dataSize)
        fail("offsets", label,
             std::to_string(dataSize - cursor) + " unused bytes after the last tensor (data section " + std::to_string(dataSize) +
                 " bytes)");
}

}  // namespace

SafetensorsHeader parseSafetensorsHeader(std::span<const std::byte> file, std::string_view label) {
    if (file.size() < 8)
        fail("too_small", label, "file is " + std::to_string(file.size()) + " bytes, shorter than the 8-byte header length");
    SafetensorsHeader header;
    header.headerLength = readLittleEndian64(file.data());
    if (header.headerLength > kMaxHeaderLength)
        fail("header_too_large", label, "header length " + std::to_string(header.headerLength) + " exceeds the 100 MB limit");
    if (8 + header.headerLength > file.size())
        fail("header_length", label,
             "header length " + std::to_string(header.headerLength) + " runs past the end of the " + std::to_string(file.size()) +
                 "-byte file");
    header.dataStart = 8 + header.headerLength;
    header.dataSize = file.size() - header.dataStart;

    const auto* text = reinterpret_cast<const char*>(file.data() + 8);
    const std::size_t length = header.headerLength;
    if (!simdjson::validate_utf8(text, length)) fail("header_utf8", label, "header is not valid UTF-8");
    if (length == 0 || text[0] != '{') fail("header_json", label, "header does not start with '{'");

    simdjson::dom::parser parser;
    simdjson::padded_string json(text, length);  // the header only, never tensor data
    simdjson::dom::element root;
    if (auto error = parser.parse(json).get(root))
        fail("header_json", label, std::string("header is not valid JSON: ") + simdjson::error_message(error));
    simdjson::dom::object object;
    if (root.get_object().get(object)) fail("header_json", label, "header is not a JSON object");

    std::set<std::string_view> seen;
    for (auto field : object) {
        if (!seen.insert(field.key).second) fail("duplicate_key", label, "name '" + std::string(field.key) + "' appears more than once");
        if (field.key == "__metadata__") {
            header.metadata = parseMetadata(field.value, label);
            continue;
        }
        header.tensors.push_back(parseEntry(field.key, field.value, label));
    }
    checkLayout(header.tensors, header.dataSize, label);
    return header;
}

SafetensorsFile::SafetensorsFile(std::shared_ptr<const MappedFile> mapping, SafetensorsHeader header)
    : mapping_(std::move(mapping)), header_(std::move(header)) {
    for (std::size_t i = 0; i < header_.tensors.size(); ++i)
        byName_.emplace(header_.tensors[i].name, i);
}

std::shared_ptr<const SafetensorsFile> SafetensorsFile::open(const std::filesystem::path& path) {
    auto mapping = MappedFile::open(path);
    auto header = parseSafetensorsHeader(mapping->bytes(), path.string());
    return std::shared_ptr<const SafetensorsFile>(new SafetensorsFile(std::move(mapping), std::move(header)));
}

std::string dragomanWriterOf(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return {};
    try {
        const auto file = SafetensorsFile::open(path);
        const auto it = file->header().metadata.find("dragoman");
        return it == file->header().metadata.end() ? std::string() : it->second;
    } catch (const Error&) {
        return {};
    }
}

const TensorInfo* SafetensorsFile::find(std::string_view name) const noexcept {
    auto it = byName_.find(name);
    return it == byName_.end() ? nullptr : &header_.tensors[it->second];
}

std::span<const std::byte> SafetensorsFile::bytes(const TensorInfo& tensor) const noexcept {
    return mapping_->bytes().subspan(header_.dataStart + tensor.begin, tensor.nbytes());
}

}  // namespace dragoman
