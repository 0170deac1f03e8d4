#pragma once
// Next-token scores as the decoding loops read them, without libtorch: `rows` rows of `vocab` float32 values,
// contiguous, in memory the value keeps alive (a buffer of its own, or a tensor's storage: decode/logits_tensor.h).
// Copies share the memory; slice() gives a view of some rows (a batched step's rows for one request).
#include <cstdint>
#include <memory>
#include <utility>

namespace dragoman {

class Logits {
public:
    Logits() = default;
    // Uninitialised rows, written by the caller before they are read.
    static Logits allocate(std::int64_t rows, std::int64_t vocab) {
        std::shared_ptr<float[]> buffer(new float[static_cast<std::size_t>(rows * vocab)]);
        float* data = buffer.get();
        return {std::move(buffer), data, rows, vocab};
    }
    // Rows that live in memory `keep` holds.
    Logits(std::shared_ptr<const void> keep, float* data, std::int64_t rows, std::int64_t vocab)
        : keep_(std::move(keep)), data_(data), rows_(rows), vocab_(vocab) {}

    bool empty() const { return data_ == nullptr; }
    std::int64_t rows() const { return rows_; }
    std::int64_t vocab() const { return vocab_; }
    float* data() const { return data_; }
    float* row(std::int64_t r) const { return data_ + r * vocab_; }
    // Rows [first, first + count), sharing this memory.
    Logits slice(std::int64_t first, std::int64_t count) const { return {keep_, row(first), count, vocab_}; }
    const std::shared_ptr<const void>& keep() const { return keep_; }

private:
    std::shared_ptr<const void> keep_;
    float* data_ = nullptr;
    std::int64_t rows_ = 0, vocab_ = 0;
};

}  // namespace dragoman
