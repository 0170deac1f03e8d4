#include "layers/lora.h"

namespace dragoman {

std::size_t LoraSet::targeted() const {
    std::size_t n = 0;
    for (const auto& d : deltas_)
        n += d.has_value();
    return n;
}

std::int64_t LoraSet::bytes() const {
    std::int64_t n = 0;
    for (const auto& d : deltas_)
        if (d) n += static_cast<std::int64_t>(d->a.nbytes() + d->b.nbytes());
    return n;
}

}  // namespace dragoman
