#include "adapters/lora_adapter.h"

#include "adapters/lora_config.h"
#include "io/safetensors.h"
#include "io/tensor_view.h"
#include "layers/torch_device.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/log.h"
#include "util/stopwatch.h"

#include <torch/torch.h>

#include <map>
#include <set>

namespace dragoman {
namespace {

constexpr std::string_view kPrefix = "base_model.model.";

// "base_model.model.<module>.lora_A.weight" -> (<module>, 'A'); anything else -> ("", 0).
std::pair<std::string, char> splitName(const std::string& tensor) {
    for (const char which : {'A', 'B'}) {
        const std::string suffix = std::string(".lora_") + which + ".weight";
        if (tensor.starts_with(kPrefix) && tensor.ends_with(suffix) && tensor.size() > kPrefix.size() + suffix.size())
            return {tensor.substr(kPrefix.size(), tensor.size() - kPrefix.size() - suffix.size()), which};
    }
    return {"", 0};
}

std::string shapeText(const torch::Tensor& t) {
    std::string s = "[";
    for (std::int64_t i = 0; i < t.dim(); ++i)
        s += (i ? "," : "") + std::to_string(t.size(i));
    return s + "]";
}

}  // namespace

bool isAdapterFolder(const std::filesystem::path& dir) {
    return std::filesystem::is_regular_file(dir / "adapter_config.json");
}

std::shared_ptr<const LoraSet> loadLoraAdapter(const std::filesystem::path& dir, const std::string& name,
                                               const std::vector<LinearModule>& linears, Placement placement, AdapterLoadStats* stats) {
    const auto start = SteadyClock::now();
    const auto label = (dir / "adapter_config.json").string();
    if (!isAdapterFolder(dir)) throw Error("adapter", dir.string() + " is not a LoRA adapter folder (no adapter_config.json)");
    const auto config = LoraConfig::parse(readJsonObject(dir / "adapter_config.json", "adapter"), label);
    const auto file = dir / "adapter_model.safetensors";
    if (!std::filesystem::exists(file))
        throw Error("adapter", dir.string() + ": no adapter_model.safetensors (adapter_model.bin is not read: convert it to safetensors)");
    std::shared_ptr<const SafetensorsFile> mapped;
    try {
        mapped = SafetensorsFile::open(file);
    } catch (const Error& e) {
        throw Error("adapter", file.string() + ": " + e.what());
    }

    // The adapter's tensors by module.
    CopyCounter copies;
    std::map<std::string, std::pair<torch::Tensor, torch::Tensor>> tensors;
    std::vector<std::string> stray;
    for (const auto& info : mapped->tensors()) {
        const auto [module, which] = splitName(info.name);
        if (!which) {
            stray.push_back(info.name);
            continue;
        }
        auto t = mappedTensor(mapped, info, &copies);
        if (t.scalar_type() == torch::kFloat16) {
            t = t.to(torch::kFloat32);  // no kernel reads f16: widened once (a few MB at most)
            copies.tensors += 1;
            copies.bytes += t.nbytes();
        } else if (t.scalar_type() != torch::kFloat32 && t.scalar_type() != torch::kBFloat16) {
            throw Error("adapter", file.string() + ": " + info.name + " is " + std::string(c10::toString(t.scalar_type())) +
                                       " (F32, BF16 and F16 adapters are supported)");
        }
        // A damaged file (NaN or infinity) would turn every logit it touches into NaN: refused while it is named.
        if (!torch::isfinite(t).all().item<bool>())
            throw Error("adapter",
                        file.string() + ": " + info.name + " holds values that are not finite (NaN or infinity): the adapter is damaged");
        (which == 'A' ? tensors[module].first : tensors[module].second) = t;
    }
    if (!stray.empty()) throw Error("adapter", file.string() + ": tensors that are not LoRA A/B weights: " + stray.front());

    auto set = std::make_shared<LoraSet>(name, linears.size());
    std::set<std::string> bound;
    std::vector<std::string> problems;
    for (const auto& linear : linears) {
        const auto& module = linear.name;
        if (module.empty() || !config.targets(module)) continue;
        auto it = tensors.find(module);
        if (it == tensors.end() || !it->second.first.defined() || !it->second.second.defined()) {
            problems.push_back(module + " is targeted but its lora_A/lora_B tensors are missing");
            continue;
        }
        const auto& [a, b] = it->second;
        const auto r = config.rankOf(module);
        if (a.dim() != 2 || b.dim() != 2 || a.size(0) != r || a.size(1) != linear.in || b.size(0) != linear.out || b.size(1) != r) {
            problems.push_back(module + ": lora_A " + shapeText(a) + " and lora_B " + shapeText(b) + " do not fit the base's [" +
                               std::to_string(linear.out) + "," + std::to_string(linear.in) + "] weight with r " + std::to_string(r));
            continue;
        }
        LoraDelta delta{a, b, config.scalingOf(module)};
        if (!placement.onCpu()) {
            delta.a = delta.a.to(torchDevice(placement));
            delta.b = delta.b.to(torchDevice(placement));
        }
        set->set(linear.slot, std::move(delta));
        bound.insert(module);
    }
    for (const auto& [module, pair] : tensors)
        if (!bound.count(module) && std::none_of(problems.begin(), problems.end(), [&](const auto& p) { return p.starts_with(module); }))
            problems.push_back(module + " has adapter weights but is not a targeted Linear of the base model");
    if (!problems.empty()) {
        std::string text;
        for (std::size_t i = 0; i < problems.size() && i < 4; ++i)
            text += (i ? "; " : "") + problems[i];
        if (problems.size() > 4) text += "; and " + std::to_string(problems.size() - 4) + " more";
        throw Error("adapter", dir.string() + " does not fit the base model: " + text);
    }
    if (bound.empty()) throw Error("adapter", dir.string() + ": targets no module of the base model");
    if (stats) *stats = {secondsSince(start), mapped->mapping()->size(), copies.tensors.load(), bound.size()};
    log::info({name}, "adapter {} loaded in {:.1f} ms: {} modules, {} bytes, {} copies", dir.string(), secondsSince(start) * 1000,
              bound.size(), mapped->mapping()->size(), copies.tensors.load());
    return set;
}

}  // namespace dragoman
