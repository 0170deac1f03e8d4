#include "quantize/quantize_model.h"

#include "io/checkpoint.h"
#include "io/safetensors_writer.h"
#include "io/tensor_view.h"
#include "layers/linear.h"
#include "quantize/e4m3.h"
#include "util/error.h"
#include "util/json_file.h"
#include "util/log.h"

#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <set>

namespace dragoman {
namespace {

namespace fs = std::filesystem;

constexpr std::int64_t kRowsPerPass = 256;  // rows widened to float64 at a time (a few MiB)

bool floating(DType dtype) {
    return dtype == DType::F32 || dtype == DType::BF16 || dtype == DType::F16;
}

// Rows [begin, end) of a mapped weight as float64.
torch::Tensor rowsAsDouble(const torch::Tensor& weight, std::int64_t begin, std::int64_t end) {
    return weight.narrow(0, begin, end - begin).to(torch::kFloat64).contiguous();
}

// s = max|W| / top per row (or over the tensor) in float64, stored as float32; an all-zero row gets 1.
std::vector<float> scalesOf(const std::string& name, const torch::Tensor& weight, double top, bool perChannel) {
    const auto rows = weight.size(0);
    std::vector<double> amax(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; r += kRowsPerPass) {
        const auto end = std::min(rows, r + kRowsPerPass);
        const auto m = rowsAsDouble(weight, r, end).abs().amax(1);
        const double* p = m.data_ptr<double>();
        std::copy(p, p + (end - r), amax.begin() + r);
    }
    for (double a : amax)
        if (!std::isfinite(a)) throw Error("checkpoint", name + " holds infinite or NaN values: it cannot be quantized");
    if (!perChannel) amax.assign(1, amax.empty() ? 0.0 : *std::max_element(amax.begin(), amax.end()));
    std::vector<float> scales;
    for (double a : amax)
        scales.push_back(a > 0 ? static_cast<float>(a / top) : 1.0f);
    return scales;
}

struct Plan {
    std::string module;
    torch::Tensor weight;
    std::vector<float> scales;
};

// Removes what this run created in `out` unless it completed.
struct Cleanup {
    fs::path out;
    bool createdFolder = false;
    std::vector<fs::path> files;
    bool done = false;
    ~Cleanup() {
        if (done) return;
        std::error_code ignored;
        for (const auto& f : files)
            fs::remove(f, ignored);
        if (createdFolder) fs::remove(out, ignored);
    }
};

void prepareOutput(const fs::path& out, const fs::path& source, Cleanup& cleanup) {
    std::error_code ec;
    if (fs::exists(out, ec)) {
        if (!fs::is_directory(out, ec))
            throw Error("input", out.string() + " exists and is not a folder; choose a new folder for the copy");
        if (!fs::is_empty(out, ec) || ec)
            throw Error("input", out.string() + (ec ? ": cannot read it: " + ec.message() : std::string(" is not empty")) +
                                     "; the copy goes into a new or empty folder");
        if (fs::equivalent(out, source, ec)) throw Error("input", "the copy cannot go into the model's own folder");
    } else if (ec) {
        throw Error("io", out.string() + ": " + ec.message());
    } else {
        fs::create_directories(out, ec);
        if (ec) throw Error("io", out.string() + ": cannot create the folder: " + ec.message());
        cleanup.createdFolder = true;
    }
}

// Weights in any format (the float originals a hub snapshot may also hold, other frameworks' copies): not
// carried into the smaller copy.
bool weightFile(const fs::path& name) {
    static const std::set<std::string> extensions{".safetensors", ".bin", ".h5",  ".msgpack", ".onnx",
                                                  ".gguf",        ".pt",  ".pth", ".ckpt",    ".ot"};
    return extensions.count(name.extension().string()) > 0 || name.string().ends_with(".safetensors.index.json") ||
           name.string().ends_with(".bin.index.json");
}

// The other files of the model folder (tokenizer, generation config, README, license), followed through links
// (a hub snapshot links into blobs/); not weights or config.json, which is written anew.
void copyOtherFiles(const fs::path& from, const fs::path& out, Cleanup& cleanup) {
    for (const auto& entry : fs::directory_iterator(from)) {
        const auto name = entry.path().filename();
        std::error_code ec;
        if (!entry.is_regular_file(ec) || weightFile(name) || name == "config.json" || name.string().starts_with(".")) continue;
        cleanup.files.push_back(out / name);  // before the copy: a copy that fails halfway is removed too
        fs::copy_file(entry.path(), out / name, ec);
        if (ec) throw Error("io", (out / name).string() + ": cannot copy " + entry.path().string() + ": " + ec.message());
    }
}

nlohmann::json quantizationConfig(const QuantizeSettings& settings, const std::vector<std::string>& ignored, bool tables) {
    const bool fp8 = settings.type == QuantizeSettings::Type::Fp8;
    nlohmann::json weights{{"num_bits", 8},
                           {"type", fp8 ? "float" : "int"},
                           {"symmetric", true},
                           {"strategy", settings.perChannel ? "channel" : "tensor"},
                           {"dynamic", false},
                           {"group_size", nullptr},
                           {"block_structure", nullptr},
                           {"observer", "minmax"}};
    // compressed-tensors' W8A8: each token's activations quantized to int8 as it comes (kernels/int8_activation_gemm.h).
    const nlohmann::json activations{{"num_bits", 8},   {"type", "int"},         {"symmetric", true},          {"strategy", "token"},
                                     {"dynamic", true}, {"group_size", nullptr}, {"block_structure", nullptr}, {"observer", nullptr}};
    return {{"quant_method", "compressed-tensors"},
            {"format", fp8 ? "float-quantized" : "int-quantized"},
            {"quantization_status", "compressed"},
            {"config_groups",
             {{"group_0",
               {{"targets", tables ? nlohmann::json{"Linear", "Embedding"} : nlohmann::json{"Linear"}},
                {"input_activations", settings.int8Activations ? activations : nlohmann::json()},
                {"output_activations", nullptr},
                {"weights", weights}}}}},
            {"ignore", ignored}};
}

}  // namespace

QuantizeSummary quantizeModel(const RunnableModel& model, const fs::path& out, const QuantizeSettings& settings, ProgressMeter& meter,
                              std::size_t firstPhase) {
    const auto& loaded = model.loaded;
    const auto& source = loaded.entry.dir;
    if (loaded.config.contains("quantization_config"))
        throw Error("input", loaded.entry.id + " is already quantized (config.json has a quantization_config)");
    const bool fp8 = settings.type == QuantizeSettings::Type::Fp8;
    const double top = fp8 ? 448.0 : 127.0;

    // The architecture's linear layers name the weights to quantize; every other tensor is copied as it is.
    std::map<std::string, std::string> linearWeights;  // "<module>.weight" -> module
    for (const auto& linear : model.linears())
        if (!linear.name.empty()) linearWeights[linear.name + ".weight"] = linear.name;
    std::set<std::string> tableModules, repeats;  // repeats: stored copies of a quantized table, not written
    if (settings.tables)
        for (const auto& table : model.vocabularyTables()) {
            linearWeights[table.module + ".weight"] = table.module;
            tableModules.insert(table.module);
            for (const auto& alias : table.aliases)
                for (const char* suffix : {".weight", ".weight_scale"})
                    repeats.insert(alias + suffix);
        }

    std::uint64_t total = 0;
    for (const auto& [name, entry] : loaded.checkpoint.tensors())
        total += entry.info->nbytes();
    const auto measuring = firstPhase, writing = firstPhase + 1;

    Cleanup cleanup;
    cleanup.out = out;
    prepareOutput(out, source, cleanup);

    // Pass 1: the scales (one read of every weight to quantize).
    std::map<std::string, Plan> plans;
    std::uint64_t measured = 0;
    for (const auto& [name, entry] : loaded.checkpoint.tensors()) {
        const auto it = linearWeights.find(name);
        if (it == linearWeights.end() || !floating(entry.info->dtype) || entry.info->shape.size() != 2) continue;
        const auto weight = mappedTensor(entry.file, *entry.info);
        plans[name] = {it->second, weight, scalesOf(name, weight, top, settings.perChannel)};
        measured += entry.info->nbytes();
        meter.report(measuring, measured, total);
    }
    if (plans.empty()) throw Error("input", loaded.entry.id + " has no floating-point linear weights to quantize");

    // Pass 2: the new weights file, in the checkpoint's tensor order, each scale after its weight.
    SafetensorsWriter writer;
    writer.setMetadata("format", "pt");
    QuantizeSummary summary;
    summary.bytesBefore = total;
    std::uint64_t written = 0;
    std::vector<std::string> ignored;
    const bool tablesQuantized =
        std::any_of(tableModules.begin(), tableModules.end(), [&](const std::string& m) { return plans.count(m + ".weight") > 0; });
    for (const auto& [name, entry] : loaded.checkpoint.tensors()) {
        const auto& info = *entry.info;
        if (repeats.count(name)) continue;
        const auto plan = plans.find(name);
        if (plan == plans.end()) {
            if (name.ends_with(".weight") && info.shape.size() == 2) ignored.push_back(name.substr(0, name.size() - 7));
            const auto file = entry.file;
            const auto* infoPtr = entry.info;
            writer.add(name, info.dtype, info.shape,
                       [file, infoPtr, &meter, &written, total, writing](std::span<std::byte> buffer, std::uint64_t offset) {
                           const auto bytes = file->bytes(*infoPtr);
                           std::memcpy(buffer.data(), bytes.data() + offset, buffer.size());
                           written += buffer.size();
                           meter.report(writing, written, total);
                       });
            summary.bytesAfter += info.nbytes();
            continue;
        }
        const Plan* p = &plan->second;
        const auto in = info.shape[1];
        writer.add(name, fp8 ? DType::F8_E4M3 : DType::I8, info.shape,
                   [p, in, fp8, &meter, &written, total, writing, width = dtypeSize(info.dtype)](std::span<std::byte> buffer,
                                                                                                 std::uint64_t offset) {
                       const auto first = static_cast<std::int64_t>(offset), count = static_cast<std::int64_t>(buffer.size());
                       const auto rowBegin = first / in, rowEnd = (first + count + in - 1) / in;
                       const auto rows = rowsAsDouble(p->weight, rowBegin, rowEnd);
                       const double* values = rows.data_ptr<double>() + (first - rowBegin * in);
                       for (std::int64_t i = 0; i < count; ++i) {
                           const auto row = (first + i) / in;
                           const double s = p->scales.size() == 1 ? p->scales[0] : p->scales[static_cast<std::size_t>(row)];
                           const double x = values[i] / s;
                           buffer[static_cast<std::size_t>(i)] =
                               fp8 ? std::byte(encodeE4M3(x))
                                   : std::byte(static_cast<std::int8_t>(std::clamp(std::nearbyint(x), -127.0, 127.0)));
                       }
                       written += buffer.size() * width;
                       meter.report(writing, written, total);
                   });
        const std::vector<std::int64_t> scaleShape =
            settings.perChannel ? std::vector<std::int64_t>{info.shape[0], 1} : std::vector<std::int64_t>{1};
        writer.add(p->module + ".weight_scale", DType::F32, scaleShape, [p](std::span<std::byte> buffer, std::uint64_t offset) {
            std::memcpy(buffer.data(), reinterpret_cast<const std::byte*>(p->scales.data()) + offset, buffer.size());
        });
        summary.bytesAfter += static_cast<std::uint64_t>(info.numel) + p->scales.size() * sizeof(float);
        ++summary.quantized;
    }

    copyOtherFiles(source, out, cleanup);
    auto config = loaded.config;
    std::sort(ignored.begin(), ignored.end());
    config["quantization_config"] = quantizationConfig(settings, ignored, tablesQuantized);
    {
        const auto path = out / "config.json";
        cleanup.files.push_back(path);
        std::ofstream file(path);
        file << config.dump(2) << "\n";
        if (!file.flush()) throw Error("io", path.string() + ": cannot write (is the disk full?)");
    }
    cleanup.files.push_back(out / "model.safetensors");
    writer.write(out / "model.safetensors");
    cleanup.done = true;
    log::info({loaded.entry.id}, "quantized to {} ({}): {} weights, {} -> {} bytes, written to {}", fp8 ? "FP8 E4M3" : "int8",
              settings.perChannel ? "per channel" : "per tensor", summary.quantized, summary.bytesBefore, summary.bytesAfter, out.string());
    return summary;
}

}  // namespace dragoman
