// dragoman.h's quantizeModel over quantize/quantize_model.h and the model store.
#include "dragoman.h"

#include "quantize/quantize_model.h"
#include "runtime/runnable_model.h"
#include "store/model_store.h"
#include "util/error.h"

namespace dragoman {

QuantizeResult quantizeModel(const QuantizeRequest& request, const ProgressCallback& progress) {
    QuantizeSettings settings;
    if (request.type == "fp8")
        settings.type = QuantizeSettings::Type::Fp8;
    else if (request.type != "int8")
        throw Error("input", "cannot quantize to '" + request.type + "' (int8 or fp8)");
    settings.perChannel = request.perChannel;

    const ModelStore store;
    const auto source = store.resolve(request.model);
    const auto id = request.id.empty() ? source.dir.filename().string() + "-" + request.type : request.id;
    const auto out = request.out.empty() ? store.roots().cache / "quantized" / id : request.out;
    for (const auto& known : store.list())
        if (known.id == id)
            throw Error("input", "the id '" + id + "' is already taken (by " + known.dir.string() + "); choose another with --id");

    // Opening maps the weights (and hashes them on first sight); nothing is paged in ahead.
    ProgressMeter meter(progress, {},
                        {{"Opening the model", 1}, {"Measuring weights", 2}, {"Writing the copy", 4}, {"Hashing the copy", 2}});
    OpenOptions options;
    options.load.pageIn = false;
    options.load.progress = [&meter](const ProgressReport& r) {
        return meter.keepGoing(0, static_cast<std::uint64_t>(r.overall * 1000), 1000);
    };
    options.device = "cpu";
    const auto model = openModel(store, source.dir.string(), options);
    const bool existed = std::filesystem::exists(out);
    const auto summary = dragoman::quantizeModel(*model, out, settings, meter, 1);

    ModelEntry entry;
    try {
        entry = store.importModel(out, id, [&meter](std::uint64_t done, std::uint64_t total) { return meter.keepGoing(3, done, total); });
    } catch (...) {
        // The folder was new or empty: everything in it is the copy just written.
        std::error_code ignored;
        if (existed)
            for (const auto& f : std::filesystem::directory_iterator(out, ignored))
                std::filesystem::remove_all(f.path(), ignored);
        else
            std::filesystem::remove_all(out, ignored);
        throw;
    }
    QuantizeResult result;
    result.model = findModel(entry.id);
    result.quantizedWeights = summary.quantized;
    result.bytesBefore = summary.bytesBefore;
    result.bytesAfter = summary.bytesAfter;
    return result;
}

}  // namespace dragoman
