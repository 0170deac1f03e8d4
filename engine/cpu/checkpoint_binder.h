#pragma once
// Binds a checkpoint's tensors by name as the CPU kernels read them (cpu/matrix.h), without libtorch: as mapped
// where the kernels read the stored type (float32, bf16, int8, float8 E4M3 codes, each aligned), otherwise a float32
// copy kept by the binder (float16, float64, a misaligned tensor, a scale not stored in float32). The checks are
// layers/weights.h's: every expected tensor present with its exact shape, an 8-bit weight with its scale, nothing
// unexpected left over; finish() names every problem at once.
#include "cpu/hunyuan_forward.h"
#include "io/checkpoint.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace dragoman::cpu {

// What bound views point into, kept as long as they are read: the binder's float32 copies and the checkpoint's mapped
// files; and how much had to be copied (the load's report).
struct BoundMemory {
    std::vector<std::shared_ptr<const void>> keep;
    std::uint64_t copiedTensors = 0, copiedBytes = 0;
};

class CheckpointBinder {
public:
    explicit CheckpointBinder(const Checkpoint& checkpoint) : checkpoint_(checkpoint) {}

    // The weight `name` [rows, cols] with its `name`_scale ([rows, 1], [1] or []) where it has one; an 8-bit
    // weight without one is a problem. A table (`table`: an embedding) may carry a scale only if it is 8-bit.
    Matrix matrix(const std::string& name, std::int64_t rows, std::int64_t cols, bool table = false);
    // A norm's weight [dim].
    NormWeight norm(const std::string& name, std::int64_t dim);
    // A float tensor's values as float32 (a bias, a layer norm's weight): as mapped where stored so, else a copy.
    const float* floats(const std::string& name, const std::vector<std::int64_t>& shape);
    // A tensor the architecture does not read but files carry as a copy of one it does (transformers ties them):
    // accepted where `name` is stored with `original`'s shape, type and bytes, a problem where it differs; nothing
    // where it is absent.
    void acceptCopy(const std::string& name, const std::string& original);
    // The same for a copy of computed float32 values (static positions): equal once they are rounded to its type.
    void acceptCopy(const std::string& name, const std::vector<float>& values, const std::vector<std::int64_t>& shape);
    bool has(std::string_view name) const { return checkpoint_.find(name) != nullptr; }
    // Accepts a key the architecture does not read (a tied lm_head stored anyway, a static activation scale).
    void ignore(const std::string& name) { used_.insert(name); }
    // Throws Error("checkpoint") naming every missing, misshapen and unexpected key.
    void finish(const std::string& modelId) const;

    // The copies made and the checkpoint's files, which the bound views point into; the binder keeps no copy after.
    BoundMemory release();

private:
    const Checkpoint::Entry* take(const std::string& name, const std::vector<std::int64_t>& shape);
    // The tensor's values as float32: the mapping where it is float32 and aligned, else a copy.
    const float* floats(const Checkpoint::Entry& entry);

    const Checkpoint& checkpoint_;
    std::set<std::string, std::less<>> used_;
    std::vector<std::string> missing_, misshapen_;
    std::vector<std::shared_ptr<const void>> copies_;
    std::uint64_t copiedBytes_ = 0, copiedTensors_ = 0;
};

// Bytes a decoding step reads of a matrix (its weights and scales) or of a norm's weight.
std::int64_t bytesOf(const Matrix& m);
std::int64_t bytesOf(const NormWeight& w, std::int64_t dim);

// Throws Error("checkpoint") "<model>: missing keys: ...; wrong tensors: ...; unexpected keys: ..." (eight of each named,
// then a count) unless all three are empty: the one message every binder gives.
void throwBindingProblems(const std::string& modelId, const std::vector<std::string>& missing, const std::vector<std::string>& misshapen,
                          const std::vector<std::string>& unexpected);

}  // namespace dragoman::cpu
