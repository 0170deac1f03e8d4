#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace dragoman {

// A linear layer of a network as adapters and quantized copies see it: its checkpoint module name, its weight's
// shape and the slot adapters bind by (models number their linear layers 0, 1, ... in a fixed order).
struct LinearModule {
    std::string name;  // "model.layers.0.self_attn.q_proj"; empty for a layer the checkpoint does not name
    std::int64_t out = 0, in = 0;
    int slot = -1;
};

}  // namespace dragoman
