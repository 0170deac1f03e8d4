// Translation with a decoder-only model (HY-MT1.5): the official prompt in the model's chat format, greedy
// or sampled generation until a stop token, streamed through the detokenizer.
#include "decode/causal_session.h"
#include "decode/search.h"
#include "runtime/translation_job.h"
#include "text/bpe_tokenizer.h"
#include "text/sentence_splitter.h"
#include "text/streaming_detokenizer.h"

#include <torch/torch.h>

namespace dragoman {
namespace {

// A paragraph longer than this many source tokens goes in groups of whole sentences: each prompt stays
// short enough to start quickly, and the output keeps the paragraph together.
constexpr std::size_t kSegmentTokens = 256;

}  // namespace

std::string Translator::translateParagraphWithPrompt(const std::string& paragraph, const std::string& sentenceGap, Job& job) const {
    if (paragraph.find_first_not_of(" \t") == std::string::npos) return {};  // empty lines stay empty
    const auto& tokenizer = model_->requireTokenizer();
    if (tokenizer.encode(paragraph).size() <= kSegmentTokens) return translateWithPrompt(paragraph, job);
    std::string output, group;
    std::size_t groupTokens = 0;
    auto flush = [&] {
        if (group.empty() || job.stopped) return;
        if (!output.empty()) {
            output += sentenceGap;
            job.emit(sentenceGap);
        }
        output += translateWithPrompt(group, job);
        group.clear();
        groupTokens = 0;
    };
    for (const auto& sentence : splitSentences(paragraph, job.request.from.empty() ? "en" : job.request.from)) {
        const auto tokens = tokenizer.encode(sentence).size();
        if (groupTokens > 0 && groupTokens + tokens > kSegmentTokens) flush();
        group += (group.empty() ? "" : " ") + sentence;
        groupTokens += tokens;
    }
    flush();
    return output;
}

std::string Translator::translateWithPrompt(const std::string& segment, Job& job) const {
    const auto& model = *model_->causal;
    const auto& tokenizer = model_->requireTokenizer();
    const auto& r = job.request;
    const auto prompt = chat_->render(hymtUserMessage({segment, r.from, r.to, r.glossary, r.context, r.formatted}));
    // apply_chat_template tokenizes without adding the post-processor's tokens: the template spells them out.
    const auto* bpe = dynamic_cast<const BpeTokenizer*>(&tokenizer);
    const auto ids = bpe ? bpe->encodePlain(prompt) : tokenizer.encode(prompt);
    job.stats.sourceTokens += static_cast<std::int64_t>(ids.size());

    auto generation = model_->generation;
    const auto room = model.maxPositions() - static_cast<std::int64_t>(ids.size());
    if (room < 1) throw Error("input", "the prompt of " + std::to_string(ids.size()) + " tokens leaves no room to generate");
    // A translation is rarely more than twice as long as its source; the generation config may cap it lower.
    const std::int64_t maxNew = std::min({room, generation.maxNewTokens.value_or(2048), 2 * static_cast<std::int64_t>(ids.size()) + 64});
    SamplingOptions sampling;
    if (r.sample) {
        if (!generation.samplingGiven) {  // the README's recommended settings
            generation.topK = 20;
            generation.topP = 0.6;
            generation.temperature = 0.7;
            if (generation.repetitionPenalty == 1.0) generation.repetitionPenalty = 1.05;
        }
        sampling = {generation.temperature, generation.topP, generation.topK, r.seed};
    }
    const LogitsProcessors processors(generation, static_cast<std::int64_t>(ids.size()) + maxNew);
    StreamingDetokenizer stream(tokenizer);
    SearchOptions options;
    options.maxNewTokens = maxNew;
    options.eosIds = stopIds_;
    options.processors = processors.empty() ? nullptr : &processors;
    options.onToken = [&](TokenId id) {
        job.tokenArrived();
        if (std::find(stopIds_.begin(), stopIds_.end(), id) == stopIds_.end()) job.emit(stream.push(id));
        return !job.stopped;
    };
    CausalSession session(model, ids, maxNew);
    auto generated = r.sample ? sampleSearch(session, ids, options, sampling) : greedySearch(session, ids, options);
    if (!generated.empty() && std::find(stopIds_.begin(), stopIds_.end(), generated.back()) != stopIds_.end()) generated.pop_back();
    job.emit(stream.finish());
    return tokenizer.decode(generated);
}

}  // namespace dragoman
