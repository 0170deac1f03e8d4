#pragma once
// What needs libtorch, behind one interface: the libtorch Marian and HY-MT (a CUDA device, or libtorch's operators on
// the CPU: Placement::libtorchOps), LoRA adapters (their tensors), quantizing. It lives in libdragoman_torch.so, which
// torchBackend() opens on first need: a program that runs HY-MT on the CPU kernels never loads libtorch, whose
// libraries and constructors cost a quarter of a second at every start (README: Start-up).
#include "quantize/quantize_settings.h"
#include "runtime/architectures.h"

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace dragoman {

struct AdapterLoadStats;  // adapters/adapter_load_stats.h
class LoraSet;            // layers/lora.h
class ProgressMeter;      // util/progress.h
namespace cpu {
class Adapter;  // cpu/adapter_deltas.h
}

class TorchBackend {
public:
    virtual ~TorchBackend() = default;

    // Whether libtorch sees a CUDA device.
    virtual bool cudaAvailable() const = 0;

    // model_type "marian" on libtorch (Placement::libtorchOps; the CPU kernels run it otherwise, models/marian_cpu.h).
    virtual Network buildMarian(const BuildContext& context) const = 0;
    // HY-MT on a CUDA device, or on the CPU through libtorch's operators (Placement::libtorchOps).
    virtual Network buildHunyuan(const BuildContext& context) const = 0;

    // adapters/lora_adapter.h's loadLoraAdapter.
    virtual std::shared_ptr<const LoraSet> loadLoraAdapter(const std::filesystem::path& dir, const std::string& name,
                                                           const std::vector<LinearModule>& linears, Placement placement,
                                                           AdapterLoadStats* stats) const = 0;
    // An adapter's deltas as the CPU forward reads them, one view per linear slot (models/hunyuan_cpu.h).
    virtual std::shared_ptr<const cpu::Adapter> cpuAdapterOf(const LoraSet& set, std::size_t slots) const = 0;

    // quantize/quantize_model.h's quantizeModel.
    virtual QuantizeSummary quantize(const RunnableModel& model, const std::filesystem::path& out, const QuantizeSettings& settings,
                                     ProgressMeter& meter, std::size_t firstPhase) const = 0;
};

// libtorch's side, opened on the first call (libdragoman_torch.so beside the engine's libraries; where a program
// links it, the copy already loaded). Throws Error("config") when it cannot be opened, saying why.
const TorchBackend& torchBackend();

// Whether libtorch has a CUDA device: false without asking where the linked libtorch was built without CUDA (Debian's),
// so the question never loads it there.
bool cudaDeviceAvailable();

}  // namespace dragoman
