// A safetensors file's header (8-byte length, JSON, data section): every accepted tensor lies inside the file,
// its byte count matches dtype x shape, and tensors do not overlap; anything else is Error("checkpoint").
#include "fuzz_support.h"
#include "io/safetensors.h"
#include "util/error.h"

#include <span>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace dragoman;
    try {
        const auto header = parseSafetensorsHeader(std::as_bytes(std::span(data, size)), "fuzz.safetensors");
        FUZZ_CHECK(header.dataStart == 8 + header.headerLength);
        FUZZ_CHECK(header.dataStart + header.dataSize <= size);
        std::uint64_t previousEnd = 0;
        for (const auto& tensor : header.tensors) {
            FUZZ_CHECK(tensor.begin <= tensor.end && tensor.end <= header.dataSize);
            FUZZ_CHECK(tensor.begin >= previousEnd);
            previousEnd = tensor.end;
        }
    } catch (const Error&) {
    }
    return 0;
}
