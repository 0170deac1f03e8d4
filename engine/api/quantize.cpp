// dragoman.h's quantizeModel over quantize/quantize_model.h (libtorch's side, runtime/torch_backend.h) and the model store.
#include "dragoman.h"

#include "quantize/quantize_settings.h"
#include "runtime/runnable_model.h"
#include "runtime/torch_backend.h"
#include "store/model_store.h"
#include "util/error.h"

namespace dragoman {
namespace {

// "<name>-<type>" from the model's own name: the last part of a hub id ("tencent/HY-MT1.5-1.8B" -> HY-MT1.5-1.8B),
// else its folder's name.
std::string defaultId(const ModelEntry& source, const std::string& type) {
    auto name = source.id;
    while (!name.empty() && name.back() == '/')
        name.pop_back();
    if (const auto slash = name.rfind('/'); slash != std::string::npos) name = name.substr(slash + 1);
    if (name.empty()) {
        const auto dir = source.dir.lexically_normal();
        name = (dir.has_filename() ? dir.filename() : dir.parent_path().filename()).string();
    }
    return name + "-" + type;
}

// A new folder under `root` for `id` ("org/name" -> "org--name"); "-2", "-3", ... when an earlier copy's folder is
// still there (its record forgotten, its files left as the store leaves every folder).
std::filesystem::path freeFolder(const std::filesystem::path& root, const std::string& id) {
    std::string name = id;
    for (std::size_t at; (at = name.find('/')) != std::string::npos;)
        name.replace(at, 1, "--");
    std::error_code ec;
    auto folder = root / name;
    for (int n = 2; std::filesystem::exists(folder, ec) && !std::filesystem::is_empty(folder, ec); ++n)
        folder = root / (name + "-" + std::to_string(n));
    return folder;
}

}  // namespace

QuantizeResult quantizeModel(const QuantizeRequest& request, const ProgressCallback& progress) {
    QuantizeSettings settings;
    if (request.type == "fp8")
        settings.type = QuantizeSettings::Type::Fp8;
    else if (request.type != "int8")
        throw Error("input", "cannot quantize to '" + request.type + "' (int8 or fp8)");
    settings.perChannel = request.perChannel;
    settings.tables = request.tables;
    if (request.int8Activations && settings.type != QuantizeSettings::Type::Int8)
        throw Error("input", "int8 activations go with int8 weights, not " + request.type);
    settings.int8Activations = request.int8Activations;

    const ModelStore store;
    const auto source = store.resolve(request.model);
    const auto id = request.id.empty() ? defaultId(source, request.int8Activations ? "w8a8" : request.type) : request.id;
    if (id.empty() || id.front() == '/' || id.find("..") != std::string::npos || id.find('\\') != std::string::npos)
        throw Error("input", "'" + id + "' cannot be a model id (no leading '/', '..' or '\\')");
    const auto out = request.out.empty() ? freeFolder(store.roots().cache / "quantized", id) : request.out;
    for (const auto& known : store.list())
        if (known.id == id)
            throw Error("input", "there is already a model '" + id + "' (" + known.dir.string() +
                                     "): a copy made earlier? Use it, or give the new copy another id (--id)");

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
    std::error_code ec;
    const bool existed = std::filesystem::exists(out, ec);
    const auto summary = torchBackend().quantize(*model, out, settings, meter, 1);

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
