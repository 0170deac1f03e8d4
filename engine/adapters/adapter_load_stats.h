#pragma once
// What loading one LoRA adapter took (adapters/lora_adapter.h).
#include <cstddef>
#include <cstdint>

namespace dragoman {

struct AdapterLoadStats {
    double seconds = 0;
    std::uint64_t bytes = 0, copies = 0;
    std::size_t modules = 0;
};

}  // namespace dragoman
