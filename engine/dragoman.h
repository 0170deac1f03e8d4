#pragma once
// Dragoman's engine: the one header an application includes (app/ and ui/ include no other engine header).
// In the spirit of llama.cpp's llama.h: parameter structs with defaults, a read-only Model that many
// requests share, per-request state inside each request, one progress callback and one cancel token.
// Everything throws dragoman::Error (category + detail) on failure and Cancelled when stopped; nothing aborts.
//
//     dragoman::initEngine();
//     auto model = dragoman::Model::load("opus-en-de", {});
//     dragoman::TranslationRequest request{.text = "Good morning.", .from = "en", .to = "de"};
//     std::string german = model->translate(request);
#include "kernels/thread_roles.h"
#include "runtime/translation_request.h"
#include "text/language_detection.h"
#include "text/languages.h"
#include "util/cancel.h"
#include "util/error.h"
#include "util/partial_files.h"
#include "util/paths.h"
#include "util/progress.h"
#include "util/regular_file.h"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace dragoman {

// ---- Progress: ProgressReport and ProgressCallback (util/progress.h), one contract for every long operation.

// ---- The process ----

struct EngineParams {
    int threads = 0;  // compute threads; 0: $DRAGOMAN_THREADS, else one per core
};
// Sizes the compute thread pools, once per process, on the thread that will run inference (later calls do
// nothing). Returns the thread count in force.
int initEngine(const EngineParams& params = {});
// Threads that only hand translations to a model and wait for them (a batch's line or segment workers) hold a
// YieldToKernelThreads while they run (kernels/thread_roles.h): woken, they wait for a free core instead of
// preempting the model's compute threads mid-step.

// Logs to stderr (warnings and above unless $DRAGOMAN_LOG says otherwise) and to a rotating file in the user's
// data folder. Idempotent.
void initLogging();
enum class LogLevel { Debug, Info, Warning, Error };
void logMessage(LogLevel level, std::string_view text);
void flushLog();
// Our libraries that are opened when first needed (PDF support, the developer commands) are looked for where
// paths::ownLibraryCandidates() says, and opened by paths::openOwnLibrary() (util/paths.h).
// requireRegularFile(path) (util/regular_file.h): a path named for reading must be a plain file, never a pipe.

// ---- Languages ----

// Language, allLanguages() and findLanguage(): the codes of CLI.md with the names the prompts use.
bool isValidUtf8(std::string_view text);
// DetectedLanguage and detectLanguage(text) (text/language_detection.h): the language a text is written in.
// sourceLanguageFor() below decides what a model is asked to translate from.

// ---- The model store: our cache, imports, the Hugging Face hub cache, the bundled models ----

struct ModelListing {
    std::string id;
    std::filesystem::path dir;
    std::string source;        // bundled, cache, imported, hub, path
    std::string modelType;     // config.json model_type
    std::string architecture;  // config.json architectures[0]
    std::string revision;      // hub snapshot, if any
    std::uint64_t weightBytes = 0;
    std::string base;          // a LoRA adapter's (modelType "peft_lora") base model, as its config names it
    std::string quantization;  // "int8", "fp8" or "w8a8" for a quantized copy, another method's name, "" for none
};
struct StoreLocations {
    std::filesystem::path cache, hub;
};

// Bundled, our cache, then the hub cache. Throws Error on an unreadable store.
std::vector<ModelListing> listModels();
StoreLocations storeLocations();
// The default model's id (the first bundled one), or nullopt when none is installed.
std::optional<std::string> findDefaultModel();
// A model id known to the store, or a folder in Hugging Face layout. Throws Error("model_not_found").
ModelListing findModel(const std::string& idOrPath);
// The folder of a LoRA adapter given as a path or an imported id, its files checked against their manifest
// (hashed once, at import or first sight). Throws Error("adapter") or Error("integrity").
std::filesystem::path findAdapter(const std::string& idOrPath);
// Registers a folder in place (nothing copied) and hashes its files once.
ModelListing importModel(const std::filesystem::path& dir, const std::string& id = {}, const ProgressCallback& progress = {});
// Forgets an imported model (its record; the folder is never touched). Throws Error("input") for any other kind,
// Error("model_not_found") for an unknown id.
ModelListing forgetModel(const std::string& id);

struct VerifyReport {
    std::string id;
    std::size_t files = 0;
    std::uint64_t bytes = 0;
    std::vector<std::string> problems;     // one per changed or missing file; empty: intact
    bool rerecorded = false;               // full: contents unchanged, the files' new times were recorded
    std::string describeProblems() const;  // "id: a; b", for one error message
};
// Sizes and times against the manifest, or (full) every file re-hashed.
VerifyReport verifyModel(const std::string& idOrPath, bool full, const ProgressCallback& progress = {});

// ---- Smaller copies: 8-bit weights (and optionally 8-bit activations) ----

struct QuantizeRequest {
    std::string model;             // id or folder
    std::filesystem::path out;     // a new (or empty) folder; empty: <our cache>/quantized/<id>
    std::string type = "int8";     // int8 or fp8 (E4M3)
    bool perChannel = true;        // false: one scale per tensor
    bool tables = true;            // the embedding and output tables too; false: they stay as they are (quant.py's copy)
    bool int8Activations = false;  // int8 only: activations quantized per token too (W8A8), products on integer kernels
    std::string id;                // the copy's id in the store; empty: "<model's folder name>-<type>" (type w8a8 with int8Activations)
};
struct QuantizeResult {
    ModelListing model;  // the copy, registered (hashed) like an import
    std::size_t quantizedWeights = 0;
    std::uint64_t bytesBefore = 0, bytesAfter = 0;
};
// Writes the model's linear weights (and embedding and output tables) as int8 or FP8 with a scale per output
// channel (compressed-tensors layout), everything else unchanged, and registers the copy. Never writes into a
// folder that is not empty; a failure or cancel leaves nothing behind. Throws Error("input"), Error("io"), Cancelled.
QuantizeResult quantizeModel(const QuantizeRequest& request, const ProgressCallback& progress = {});

// ---- Prompts for a remote chat model ----

// What a remote backend sends an OpenAI-compatible server running HY-MT for one line of `request`: the user
// message the local engine renders (the model card's templates with the glossary, context and formatted text),
// so a server running the same model greedily answers what the local engine would. Throws Error("input") for a
// target language HY-MT does not know.
std::string chatTranslationMessage(const TranslationRequest& request, const std::string& line);
// The answer as the local engine returns it (formatted text's target tags removed).
std::string chatTranslationAnswer(const TranslationRequest& request, const std::string& answer);
// The prompt profile a model name selects ("tencent/Hy-MT2-7B" -> "hy-mt2"; HY-MT1.5, Hunyuan-MT and names
// that say nothing -> "hy-mt1.5"), for a remote model known only by its name.
std::string promptProfileForName(std::string_view name);
// Throws Error("input") unless `profile` is "hy-mt1.5" or "hy-mt2".
void checkPromptProfile(std::string_view profile);

// ---- A loaded model ----

struct ModelParams {
    std::string device = "auto";         // auto (CUDA when available), cpu, cuda; $DRAGOMAN_DEVICE overrides
    ProgressCallback progress;           // may be empty
    CancelToken cancel;                  // the load stops within ~100 ms and throws Cancelled
    bool pageIn = true;                  // read every weight page before returning
    std::uint64_t memoryLimitBytes = 0;  // 0: what the system says is available
};

struct LoadReport {
    double readySeconds = 0;  // from the start of the load until the model can run
    std::uint64_t bytes = 0, copies = 0;
    bool hashedOnLoad = false;  // first sight: the files were hashed during this load
};

struct ModelDescription {
    std::string id, architecture, device;
    std::vector<std::string> targetLanguages;  // empty: a fixed pair
    std::string fixedFrom, fixedTo;            // a bilingual model's pair
    std::vector<std::string> sourceLanguages;  // a multilingual model's sources, where known; empty: fixedFrom, or any
    bool translates = false;                   // false for a checkpoint without tokenizer files
    bool prompts = false;                      // glossary, context, formatted text and sampling (chat models)
    bool beamSearch = false;
    bool chat = false;  // answers conversations (TranslationRequest::messages) in its own chat format
    // A translation model (encoder-decoder) decodes up to this many requests together; while that many do, the
    // sources of further requests in flight are encoded together and those requests take the places that free up,
    // so a caller with many sources in hand gains by running twice as many. 0: no such gain (chat models).
    int encodesAhead = 0;
    std::string promptProfile;  // "hy-mt1.5" or "hy-mt2" for prompted models, else empty
    bool instructions = false;  // style, preferences, delimiters and structured data (the hy-mt2 profile)
    // Reads text in any language, whatever its targets (a server whose sources are not known here): `from: auto`
    // passes the detected language on and leaves refusing to it.
    bool anySource = false;
};

// How many texts of a batch (stdin lines, a document's segments) `model` decodes together by default: 8 for chat
// models (HY-MT reads gigabytes of weights per step, and sharing the step between 8 gains several times over), as
// many as a translation model's steps take (encodesAhead: Marian shares its steps and its encoder passes; README:
// Batched decoding), 16 for a model that does not say (a remote one).
inline int defaultTogether(const ModelDescription& model) {
    if (model.chat) return 8;
    return model.encodesAhead > 0 ? model.encodesAhead : 16;
}

// Requests to keep in flight so that `together` of them decode at once: as many again where `together` fills a
// translation model's places, whose encoder then takes the waiting requests' sources in one pass (encodesAhead).
inline int requestsInFlight(const ModelDescription& model, int together) {
    return model.encodesAhead > 0 && together >= model.encodesAhead ? together + model.encodesAhead : together;
}

// What `from: auto` (the window's "Detect language", `translate --from auto`, LibreTranslate's `source: auto`)
// becomes for one text and one model.
struct SourceGuess {
    std::string from;      // what to ask the model for: the detected language where the model reads it, a
                           // bilingual model's own source, or empty (unknown: the model's prompts need none)
    std::string detected;  // what the text looks like (empty: too little to tell)
    bool reliable = false;
    // The text is, without doubt, in a language the model does not read (French text, an en-de model); `reason`
    // says so in a sentence naming what the model reads.
    bool unreadable = false;
    std::string reason;
};
SourceGuess sourceLanguageFor(std::string_view text, const ModelDescription& model);

// What a model folder can translate, read from its config and tokenizer files without loading its weights (the
// model manager's column); the same lists a loaded model's ModelDescription gives. Throws Error("config") for an
// unknown architecture; a folder without tokenizer files translates nothing (both empty).
struct ModelLanguages {
    std::vector<std::string> targets;  // empty: a fixed pair (or nothing)
    std::string fixedFrom, fixedTo;
};
ModelLanguages modelLanguages(const ModelListing& model);

struct AdapterLoadReport {
    double seconds = 0;
    std::uint64_t bytes = 0, copies = 0;
    std::size_t modules = 0;  // Linear layers it adapts
};

class Model {
public:
    // Throws Error (model_not_found, integrity, memory, checkpoint, config, tokenizer, ...) or Cancelled.
    static std::shared_ptr<const Model> load(const std::string& idOrPath, const ModelParams& params = {});
    ~Model();

    const ModelDescription& description() const { return description_; }
    const LoadReport& loadReport() const { return report_; }

    // Translates request.text (one output line per input line); deltas stream through request.onDelta.
    // Safe to call from several threads at once: the model is read-only, each call keeps its own state.
    std::string translate(const TranslationRequest& request, TranslationStats* stats = nullptr) const;
    // A PEFT LoRA adapter (a folder with adapter_config.json + adapter_model.safetensors) bound to this model,
    // mapped zero-copy and applied unmerged to the requests that name it (TranslationRequest::adapter); the
    // base weights stay shared and untouched. Hold the pointer to keep it resident. Throws Error("adapter")
    // for another PEFT type, DoRA, shapes or modules that do not fit this model, missing or truncated tensors.
    std::shared_ptr<const LoraSet> loadAdapter(const std::string& idOrPath, AdapterLoadReport* report = nullptr) const;

    // What the network receives for request.text, one string per prompt in the order they run (a prompted
    // model's chat format and special tokens spelled out; a language-token model's source with its token).
    // Throws Error("input") like translate() for a request the model cannot serve.
    std::vector<std::string> prompts(const TranslationRequest& request) const;

    // Source-side ids exactly as Hugging Face's tokenizer gives them, and ids back to text.
    std::vector<std::int64_t> tokenize(std::string_view text) const;
    std::string detokenize(const std::vector<std::int64_t>& ids, bool keepSpecial = false) const;

    struct Impl;
    explicit Model(std::unique_ptr<Impl> impl);

private:
    std::unique_ptr<Impl> impl_;
    ModelDescription description_;
    LoadReport report_;
};

}  // namespace dragoman
