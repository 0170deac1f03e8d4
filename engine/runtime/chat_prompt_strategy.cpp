#include "runtime/chat_prompt_strategy.h"

#include "decode/causal_session.h"
#include "decode/search.h"
#include "text/languages.h"
#include "text/sentence_splitter.h"
#include "text/streaming_detokenizer.h"
#include "util/error.h"

#include <torch/torch.h>

#include <algorithm>

namespace dragoman {

ChatPromptStrategy::ChatPromptStrategy(const RunnableModel& model) : model_(model), network_(*model.causal()) {
    const auto& tokenizer = model.requireTokenizer();
    try {
        chat_ = detectChatFormat([&](const std::string& token) { return tokenizer.idOf(token).has_value(); });
    } catch (const Error&) {
        return;  // check() refuses every request with the reason
    }
    stopIds_ = model.generation.eosIds;
    for (const auto& token : chat_->stopTokens)
        if (auto id = tokenizer.idOf(token); id && std::find(stopIds_.begin(), stopIds_.end(), *id) == stopIds_.end())
            stopIds_.push_back(*id);
}

std::vector<std::string> ChatPromptStrategy::targetLanguages() const {
    std::vector<std::string> codes;
    for (const auto& language : allLanguages())
        codes.push_back(language.code);
    return codes;
}

void ChatPromptStrategy::check(const TranslationRequest& request) const {
    if (!chat_) throw Error("tokenizer", model_.id() + ": no tokenizer.json with HY-MT's chat tokens");
    if (!findLanguage(request.to)) throw Error("input", "unknown target language '" + request.to + "'");
}

std::string ChatPromptStrategy::translateParagraph(const std::string& paragraph, TranslationJob& job) const {
    if (paragraph.find_first_not_of(" \t") == std::string::npos) return {};  // empty lines stay empty
    const auto& tokenizer = model_.requireTokenizer();
    if (tokenizer.encode(paragraph).size() <= kSegmentTokens) return translateSegment(paragraph, job);
    const auto gap = job.sentenceGap();
    std::string output, group;
    std::size_t groupTokens = 0;
    auto flush = [&] {
        if (group.empty() || !job.keepGoing()) return;
        if (!output.empty()) {
            output += gap;
            job.emit(gap);
        }
        output += translateSegment(group, job);
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

std::string ChatPromptStrategy::translateSegment(const std::string& segment, TranslationJob& job) const {
    const auto& tokenizer = model_.requireTokenizer();
    const auto& r = job.request;
    const auto prompt = chat_->render(hymtUserMessage({segment, r.from, r.to, r.glossary, r.context, r.formatted}));
    // apply_chat_template tokenizes without adding the post-processor's tokens: the template spells them out.
    const auto ids = tokenizer.encodePlain(prompt);
    job.stats.sourceTokens += static_cast<std::int64_t>(ids.size());

    auto generation = model_.generation;
    const auto room = network_.maxPositions() - static_cast<std::int64_t>(ids.size());
    if (room < 1) throw Error("input", "the prompt of " + std::to_string(ids.size()) + " tokens leaves no room to generate");
    // A translation is rarely more than twice as long as its source; the generation config may cap it lower.
    const std::int64_t maxNew = std::min({room, generation.maxNewTokens.value_or(2048), 2 * static_cast<std::int64_t>(ids.size()) + 64});
    SamplingOptions sampling;
    if (r.sample) {
        if (!generation.samplingGiven) {  // the model card's recommended settings
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
        return job.keepGoing();
    };
    std::unique_ptr<CausalSession> session;
    try {
        session = std::make_unique<CausalSession>(
            network_, ids, maxNew, [&r] { return r.cancel.cancelled(); }, r.adapter);
    } catch (const Cancelled&) {
        job.stopped = true;
        return {};
    }
    auto generated = r.sample ? sampleSearch(*session, ids, options, sampling) : greedySearch(*session, ids, options);
    if (!generated.empty() && std::find(stopIds_.begin(), stopIds_.end(), generated.back()) != stopIds_.end()) generated.pop_back();
    job.emit(stream.finish());
    auto text = tokenizer.decode(generated);
    return r.formatted ? stripTargetTags(text) : text;
}

}  // namespace dragoman
