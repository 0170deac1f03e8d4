#pragma once
// Named weights as the checkpoint stores them, and the checks an architecture runs when it binds them:
// every expected tensor present with its exact shape, nothing unexpected left over.
#include "layers/parameter_layout.h"

#include <torch/types.h>

#include <map>
#include <set>
#include <string>
#include <vector>

namespace dragoman {

using WeightTable = std::map<std::string, torch::Tensor, std::less<>>;

class WeightBinder {
public:
    explicit WeightBinder(const WeightTable& table) : table_(table) {}
    // A binder that answers every take() with zeros and writes down what was asked for: a network's constructor
    // run against it yields the network's parameter layout, so the layout is written once, in the constructor.
    explicit WeightBinder(ParameterLayout& layout) : table_(empty()), layout_(&layout) {}

    // The tensor `name` with exactly `shape`; records a problem (reported by finish()) when absent or misshapen.
    torch::Tensor take(const std::string& name, const std::vector<std::int64_t>& shape);
    // The tensor `name` if the checkpoint has it, with one of `shapes` (else a problem for finish()); an
    // undefined tensor when it is absent. Not part of a recorded layout.
    torch::Tensor takeOptional(const std::string& name, const std::vector<std::vector<std::int64_t>>& shapes);
    // The stored scale `weightName`_scale of an 8-bit weight with `rows` rows ([rows, 1], [1] or []) as stored;
    // undefined when absent, which is a problem for finish() if `weight` is 8-bit (I8, or F8_E4M3 bound as bytes).
    torch::Tensor takeScale(const std::string& weightName, const torch::Tensor& weight, std::int64_t rows);
    // Accepts an optional alias key (e.g. lm_head.weight) only if it equals `original` exactly.
    void acceptAlias(const std::string& name, const torch::Tensor& original);
    // Accepts an optional key the architecture does not use (e.g. a tied lm_head.weight stored anyway).
    void ignore(const std::string& name) { used_.insert(name); }
    // Records a problem the binder's own checks cannot see (reported by finish()).
    void reject(const std::string& problem) {
        if (!layout_) misshapen_.push_back(problem);
    }
    // Throws Error("checkpoint") naming every missing, misshapen and unexpected key.
    void finish(const std::string& modelId) const;

private:
    static const WeightTable& empty();

    const WeightTable& table_;
    ParameterLayout* layout_ = nullptr;
    std::set<std::string, std::less<>> used_;
    std::vector<std::string> missing_, misshapen_;
};

}  // namespace dragoman
