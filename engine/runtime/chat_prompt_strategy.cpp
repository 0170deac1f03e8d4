#include "runtime/chat_prompt_strategy.h"

#include "decode/causal_session.h"
#include "decode/causal_steps.h"
#include "decode/search.h"
#include "text/languages.h"
#include "text/sentence_splitter.h"
#include "text/streaming_detokenizer.h"
#include "util/error.h"
#include "util/log.h"

#include <algorithm>

namespace dragoman {

ChatPromptStrategy::ChatPromptStrategy(const RunnableModel& model)
    : model_(model), network_(*model.causal()), batcher_(causalSteps(network_), 16) {
    profile_ = detectPromptProfile(model.loaded.entry, model.loaded.config);
    log::info({model.id(), 0}, "prompts: {} ({})", promptProfileName(profile_.profile),
              profile_.identity.empty() ? std::string("no family named; the default") : "named by " + profile_.identity);
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

std::vector<std::string> ChatPromptStrategy::languages() {
    std::vector<std::string> codes;
    for (const auto& language : allLanguages())
        codes.push_back(language.code);
    return codes;
}

void ChatPromptStrategy::check(const TranslationRequest& request) const {
    if (!chat_) throw Error("tokenizer", model_.id() + ": no tokenizer.json with HY-MT's chat tokens");
    if (!findLanguage(request.to)) throw Error("input", "unknown target language '" + request.to + "'");
    // Renders the first line's prompt: the templates refuse what they cannot say before any work is done.
    const auto firstLine = request.text.substr(0, request.text.find('\n'));
    try {
        userMessageFor(firstLine, request);
    } catch (const Error& e) {
        if (profileFor(request) == PromptProfile::HyMt15 && request.promptProfile.empty())
            throw Error(e.category(), e.detail() + " (" + model_.id() + " is spoken to with the hy-mt1.5 prompts; " +
                                          "--prompt-profile hy-mt2 overrides)");
        throw;
    }
}

std::string ChatPromptStrategy::promptProfile() const {
    return std::string(promptProfileName(profile_.profile));
}

bool ChatPromptStrategy::takesInstructions() const {
    return profile_.profile == PromptProfile::HyMt2;
}

PromptProfile ChatPromptStrategy::profileFor(const TranslationRequest& request) const {
    return request.promptProfile.empty() ? profile_.profile : parsePromptProfile(request.promptProfile);
}

std::string ChatPromptStrategy::userMessageFor(const std::string& segment, const TranslationRequest& request) const {
    return userMessage(profileFor(request), request, segment);
}

std::vector<std::string> ChatPromptStrategy::segmentsOf(const std::string& paragraph, const TranslationRequest& request) const {
    if (paragraph.find_first_not_of(" \t\r\n") == std::string::npos) return {};  // empty lines stay empty
    const auto& tokenizer = model_.requireTokenizer();
    if (!request.structuredFormat.empty() || tokenizer.encode(paragraph).size() <= kSegmentTokens) return {paragraph};
    std::vector<std::string> groups;
    std::string group;
    std::size_t groupTokens = 0;
    for (const auto& sentence : splitSentences(paragraph, request.from.empty() ? "en" : request.from)) {
        const auto tokens = tokenizer.encode(sentence).size();
        if (groupTokens > 0 && groupTokens + tokens > kSegmentTokens) {
            groups.push_back(std::move(group));
            group.clear();
            groupTokens = 0;
        }
        group += (group.empty() ? "" : " ") + sentence;
        groupTokens += tokens;
    }
    if (!group.empty()) groups.push_back(std::move(group));
    return groups;
}

std::string ChatPromptStrategy::translateParagraph(const std::string& paragraph, TranslationJob& job) const {
    const auto gap = job.sentenceGap();
    std::string output;
    const auto segments = segmentsOf(paragraph, job.request);
    for (std::size_t s = 0; s < segments.size() && job.keepGoing(); ++s) {
        if (s > 0) {
            output += gap;
            job.emit(gap);
        }
        output += translateSegment(segments[s], job);
    }
    return output;
}

std::vector<std::string> ChatPromptStrategy::prompts(const std::string& paragraph, const TranslationRequest& request) const {
    std::vector<std::string> texts;
    for (const auto& segment : segmentsOf(paragraph, request))
        texts.push_back(chat_->render(userMessageFor(segment, request)));
    return texts;
}

std::string ChatPromptStrategy::translateSegment(const std::string& segment, TranslationJob& job) const {
    const auto& r = job.request;
    auto text = generate(chat_->render(userMessageFor(segment, r)), job);
    return r.formatted ? stripTargetTags(text) : text;
}

std::string ChatPromptStrategy::complete(TranslationJob& job) const {
    if (!chat_) throw Error("tokenizer", model_.id() + ": no tokenizer.json with HY-MT's chat tokens");
    std::string system, prompt = chat_->begin;
    bool answered = false;
    for (const auto& message : job.request.messages) {
        if (message.role == "system" || message.role == "developer") {
            system += (system.empty() ? "" : "\n\n") + message.content;
        } else if (message.role == "user") {
            prompt += chat_->user + (system.empty() ? "" : system + "\n\n") + message.content;
            system.clear();
            answered = false;
        } else if (message.role == "assistant") {
            prompt += chat_->assistant + message.content + (chat_->stopTokens.empty() ? "" : chat_->stopTokens.front());
            answered = true;
        } else {
            throw Error("input", "unknown message role '" + message.role + "' (system, user or assistant)");
        }
    }
    if (answered || prompt == chat_->begin) throw Error("input", "the conversation must end with a user message");
    return generate(prompt + chat_->assistant, job);
}

std::string ChatPromptStrategy::generate(const std::string& prompt, TranslationJob& job) const {
    const auto& tokenizer = model_.requireTokenizer();
    const auto& r = job.request;
    // apply_chat_template tokenizes without adding the post-processor's tokens: the template spells them out.
    const auto ids = tokenizer.encodePlain(prompt);
    job.stats.sourceTokens += static_cast<std::int64_t>(ids.size());

    auto generation = model_.generation;
    const auto room = network_.maxPositions() - static_cast<std::int64_t>(ids.size());
    if (room < 1) throw Error("input", "the prompt of " + std::to_string(ids.size()) + " tokens leaves no room to generate");
    // A translation is rarely more than twice as long as its source; the generation config may cap it lower.
    std::int64_t maxNew = std::min({room, generation.maxNewTokens.value_or(2048), 2 * static_cast<std::int64_t>(ids.size()) + 64});
    if (!r.messages.empty()) maxNew = std::min(room, generation.maxNewTokens.value_or(room));   // an answer may be long
    if (const auto left = job.tokensLeft()) maxNew = std::clamp<std::int64_t>(*left, 1, room);  // the request's cap, over all segments
    SamplingOptions sampling;
    // Settings a request names replace the model's: temperature 0 is greedy, as in OpenAI's API.
    const bool sample = r.temperature ? *r.temperature > 0 : (r.sample || (!r.messages.empty() && generation.doSample));
    if (sample && (r.temperature || r.topP)) {
        if (r.temperature) generation.temperature = *r.temperature;
        if (r.topP) generation.topP = *r.topP;
        if (!generation.samplingGiven) generation.topK = 0;  // none named anywhere: no top-k cut
        sampling = {generation.temperature, generation.topP, generation.topK, r.seed};
    } else if (sample) {
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
        if (job.streams() && std::find(stopIds_.begin(), stopIds_.end(), id) == stopIds_.end()) job.emit(stream.push(id));
        return job.keepGoing();
    };
    options.onTokenAnyThread = !job.streams();  // then it only counts and checks the cancel flag
    std::unique_ptr<CausalSession> session;
    try {
        session = std::make_unique<CausalSession>(
            network_, ids, maxNew, [&r] { return r.cancel.cancelled(); }, r.adapter, &batcher_);
    } catch (const Cancelled&) {
        job.stopped = true;
        return {};
    }
    auto generated = sample ? sampleSearch(*session, ids, options, sampling) : greedySearch(*session, ids, options);
    if (!generated.empty() && std::find(stopIds_.begin(), stopIds_.end(), generated.back()) != stopIds_.end())
        generated.pop_back();
    else if (!job.stopped)
        job.stats.truncated = true;
    if (job.streams()) job.emit(stream.finish());
    return tokenizer.decode(generated);
}

}  // namespace dragoman
