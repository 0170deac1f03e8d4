// libtorch's side of the engine (runtime/torch_backend.h), in libdragoman_torch.so.
#include "adapters/lora_adapter.h"
#include "decode/libtorch_seq2seq.h"
#include "io/tensor_view.h"
#include "layers/lora.h"
#include "models/hunyuan.h"
#include "models/marian.h"
#include "quantize/quantize_model.h"
#include "runtime/torch_backend.h"

#include <torch/cuda.h>

namespace dragoman {
namespace {

class LibtorchBackend final : public TorchBackend {
public:
    bool cudaAvailable() const override { return torch::cuda::is_available(); }

    Network buildMarian(const BuildContext& c) const override {
        auto model = std::make_shared<const MarianModel>(MarianConfig::parse(c.config, c.configLabel), tensorsOf(c.checkpoint, &c.copies),
                                                         c.modelId);
        auto network = Network::of(model);
        network.seq2seq = seq2seqOf(std::move(model));
        return network;
    }

    Network buildHunyuan(const BuildContext& c) const override {
        return Network::of(std::make_shared<const HunyuanModel>(HunyuanConfig::parse(c.config, c.configLabel),
                                                                tensorsOf(c.checkpoint, &c.copies), c.modelId, c.placement));
    }

    std::shared_ptr<const LoraSet> loadLoraAdapter(const std::filesystem::path& dir, const std::string& name,
                                                   const std::vector<LinearModule>& linears, Placement placement,
                                                   AdapterLoadStats* stats) const override {
        return dragoman::loadLoraAdapter(dir, name, linears, placement, stats);
    }

    std::shared_ptr<const cpu::Adapter> cpuAdapterOf(const LoraSet& set, std::size_t slots) const override {
        return dragoman::cpuAdapterOf(set, slots);
    }

    QuantizeSummary quantize(const RunnableModel& model, const std::filesystem::path& out, const QuantizeSettings& settings,
                             ProgressMeter& meter, std::size_t firstPhase) const override {
        return quantizeModel(model, out, settings, meter, firstPhase);
    }
};

}  // namespace
}  // namespace dragoman

extern "C" __attribute__((visibility("default"))) const dragoman::TorchBackend* dragoman_torch_backend() {
    static const dragoman::LibtorchBackend backend;
    return &backend;
}
