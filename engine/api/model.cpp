// dragoman.h's Model: a RunnableModel behind the public API. Text in, translation out: paragraphs stay
// paragraphs (one output line per input line, empty lines stay empty), each translated by the model's strategy
// (runtime/translation_strategy.h), and the text streams out as final deltas while it is generated.
#include "api/model_of.h"
#include "dragoman.h"

#include "adapters/adapter_load_stats.h"
#include "runtime/device.h"
#include "runtime/runnable_model.h"
#include "store/model_store.h"
#include "util/log.h"

#include <simdjson.h>

namespace dragoman {
namespace {

std::vector<std::string> splitLines(const std::string& text) {
    std::vector<std::string> lines;
    std::size_t start = 0;
    for (std::size_t at; (at = text.find('\n', start)) != std::string::npos; start = at + 1)
        lines.push_back(text.substr(start, at - start));
    lines.push_back(text.substr(start));
    for (auto& line : lines)
        if (!line.empty() && line.back() == '\r') line.pop_back();
    return lines;
}

// What is translated one at a time: each line, or structured data whole (its lines belong together).
std::vector<std::string> paragraphsOf(const TranslationRequest& request) {
    return request.structuredFormat.empty() ? splitLines(request.text) : std::vector<std::string>{request.text};
}

}  // namespace

struct Model::Impl {
    std::shared_ptr<const RunnableModel> model;
};

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
    const auto& m = *impl_->model;
    description_.id = m.id();
    description_.architecture = m.architecture;
    description_.device = m.device();
    description_.translates = m.strategy != nullptr;
    if (m.strategy) {
        description_.targetLanguages = m.strategy->targetLanguages();
        std::tie(description_.fixedFrom, description_.fixedTo) = m.strategy->fixedPair();
        description_.sourceLanguages = m.strategy->sourceLanguages();
        description_.prompts = m.strategy->takesPrompts();
        description_.beamSearch = m.strategy->supportsBeamSearch();
        description_.chat = m.strategy->chats();
        description_.encodesAhead = m.strategy->encodesAhead();
        description_.promptProfile = m.strategy->promptProfile();
        description_.instructions = m.strategy->takesInstructions();
    }
    const auto& s = m.loaded.stats;
    report_ = {s.readySeconds, s.bytes, s.copies, s.hashedOnLoad};
}

Model::~Model() = default;

std::shared_ptr<const Model> Model::load(const std::string& idOrPath, const ModelParams& params) {
    OpenOptions options;
    options.load.progress = params.progress;
    options.load.cancel = params.cancel;
    options.load.pageIn = params.pageIn;
    options.load.memoryLimitBytes = params.memoryLimitBytes;
    options.device = deviceOverride(params.device);
    const ModelStore store;
    auto impl = std::make_unique<Impl>();
    impl->model = openModel(store, idOrPath, options);
    return std::make_shared<const Model>(std::move(impl));
}

std::shared_ptr<const Model> modelOf(std::shared_ptr<const RunnableModel> model) {
    auto impl = std::make_unique<Model::Impl>();
    impl->model = std::move(model);
    return std::make_shared<const Model>(std::move(impl));
}

std::string Model::translate(const TranslationRequest& request, TranslationStats* statsOut) const {
    const auto& strategy = impl_->model->requireStrategy();  // throws for a model without tokenizer files
    TranslationStats stats;
    if (!simdjson::validate_utf8(request.text.data(), request.text.size())) throw Error("input", "the text is not valid UTF-8");
    // A model whose strategy has no beam search (HY-MT's prompts: greedy or sampled, as its card recommends) says
    // so rather than decode greedily under a request for beams.
    if (request.beams > 1 && !description_.beamSearch)
        throw Error("unsupported", "beam search is not available for " + description_.id + " (" + description_.architecture +
                                       " translates greedily, or samples with --sample)");
    const bool chat = !request.messages.empty();
    if (chat) {
        if (!strategy.chats())
            throw Error("input", description_.id + " has no chat format: it translates text from one language into another (name them)");
        for (const auto& message : request.messages)
            if (!simdjson::validate_utf8(message.content.data(), message.content.size()))
                throw Error("input", "a message is not valid UTF-8");
    } else {
        strategy.check(request);
    }

    TranslationJob job{request, stats};
    std::string output;
    // Text already in the target language (named so, or detected so) is its own translation: a model asked to
    // translate German into German rewrites it ("Guten Morgen" -> "Gute Morgen"), or answers in another language.
    if (!chat && !request.from.empty() && request.from == request.to) {
        job.emit(request.text);
        if (statsOut) *statsOut = stats;
        return request.text;
    }
    const auto lines = chat ? std::vector<std::string>{} : paragraphsOf(request);
    if (chat) output = strategy.complete(job);
    for (std::size_t l = 0; l < lines.size() && job.keepGoing(); ++l) {
        if (l > 0) {
            output += "\n";
            job.emit("\n");
        }
        output += strategy.translateParagraph(lines[l], job);
    }
    stats.stopped = job.stopped;
    stats.totalSeconds = std::chrono::duration<double>(Clock::now() - job.start).count();
    log::info({description_.id, request.requestId}, "translated {} source tokens into {} tokens in {:.3f} s (first token {:.3f} s){}",
              stats.sourceTokens, stats.generatedTokens, stats.totalSeconds, stats.firstTokenSeconds, stats.stopped ? ", stopped" : "");
    if (stats.truncated && !request.maxNewTokens)
        log::info({description_.id, request.requestId}, "the translation reached {}'s length limit and may be cut short", description_.id);
    if (statsOut) *statsOut = stats;
    return output;
}

std::shared_ptr<const LoraSet> Model::loadAdapter(const std::string& idOrPath, AdapterLoadReport* report) const {
    const std::filesystem::path dir = findAdapter(idOrPath);
    AdapterLoadStats stats;
    auto adapter = impl_->model->loadAdapter(dir, dir.filename().string(), &stats);
    if (report) *report = {stats.seconds, stats.bytes, stats.copies, stats.modules};
    return adapter;
}

std::vector<std::string> Model::prompts(const TranslationRequest& request) const {
    const auto& strategy = impl_->model->requireStrategy();
    if (!simdjson::validate_utf8(request.text.data(), request.text.size())) throw Error("input", "the text is not valid UTF-8");
    strategy.check(request);
    std::vector<std::string> prompts;
    for (const auto& paragraph : paragraphsOf(request))
        for (auto& prompt : strategy.prompts(paragraph, request))
            prompts.push_back(std::move(prompt));
    return prompts;
}

std::vector<std::int64_t> Model::tokenize(std::string_view text) const {
    return impl_->model->requireTokenizer().encode(text);
}

std::string Model::detokenize(const std::vector<std::int64_t>& ids, bool keepSpecial) const {
    return impl_->model->requireTokenizer().decode(ids, !keepSpecial);
}

}  // namespace dragoman
