#include "runtime/translator.h"

#include "runtime/translation_job.h"
#include "text/bpe_tokenizer.h"

#include "decode/search.h"
#include "runtime/language_tokens.h"
#include "text/languages.h"
#include "text/marian_tokenizer.h"
#include "text/sentence_splitter.h"
#include "text/streaming_detokenizer.h"
#include "util/error.h"
#include "util/log.h"

#include <simdjson.h>
#include <torch/torch.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <fstream>

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

bool writesWithoutSpaces(const std::string& code) {
    return code == "zh" || code == "zh-Hant" || code == "ja" || code == "yue";
}

std::pair<std::string, std::string> readPair(const std::filesystem::path& dir) {
    std::ifstream in(dir / "tokenizer_config.json");
    if (!in) return {};
    try {
        const auto json = nlohmann::json::parse(in);
        return {json.value("source_lang", ""), json.value("target_lang", "")};
    } catch (const nlohmann::json::exception&) {
        return {};
    }
}

}  // namespace

Translator::Translator(std::shared_ptr<const RunnableModel> model) : model_(std::move(model)) {
    if (const auto* marian = dynamic_cast<const MarianTokenizer*>(model_->tokenizer.get())) {
        modelLanguageTokens_ = marian->languageTokens();
        targets_ = languagesCovered(modelLanguageTokens_);
    }
    pair_ = readPair(model_->loaded.entry.dir);
    if (model_->causal) {
        if (const auto* bpe = dynamic_cast<const BpeTokenizer*>(model_->tokenizer.get())) {
            chat_ = detectChatFormat([&](const std::string& token) { return bpe->idOf(token).has_value(); });
            stopIds_ = model_->generation.eosIds;
            for (const auto& token : chat_->stopTokens)
                if (auto id = bpe->idOf(token); id && std::find(stopIds_.begin(), stopIds_.end(), *id) == stopIds_.end())
                    stopIds_.push_back(*id);
        }
        for (const auto& language : allLanguages())
            targets_.push_back(language.code);
    }
}

std::string Translator::translateSentence(const std::string& sentence, const std::string& languageToken, Job& job) const {
    const auto& m = *model_->encoderDecoder;
    const auto& tokenizer = model_->requireTokenizer();
    auto ids = tokenizer.encode(languageToken.empty() ? sentence : languageToken + " " + sentence);
    // A sentence longer than the model's positions is translated in consecutive pieces.
    const auto limit = m.maxPositions() - (languageToken.empty() ? 1 : 2);
    std::vector<std::vector<TokenId>> pieces;
    const std::size_t body = ids.size() - 1 - (languageToken.empty() ? 0 : 1);
    const std::size_t bodyStart = languageToken.empty() ? 0 : 1;
    for (std::size_t at = 0; at < body; at += static_cast<std::size_t>(limit)) {
        std::vector<TokenId> piece;
        if (!languageToken.empty()) piece.push_back(ids[0]);
        const auto end = std::min(body, at + static_cast<std::size_t>(limit));
        piece.insert(piece.end(), ids.begin() + bodyStart + at, ids.begin() + bodyStart + end);
        piece.push_back(ids.back());
        pieces.push_back(std::move(piece));
    }
    if (pieces.empty()) return {};

    const auto& generation = model_->generation;
    const std::int64_t maxLength = std::min<std::int64_t>(generation.maxLength.value_or(m.maxPositions()), m.maxPositions());
    const std::int64_t maxNew = std::max<std::int64_t>(1, maxLength - 1);
    const LogitsProcessors processors(generation, 1 + maxNew);
    std::string output;
    for (std::size_t p = 0; p < pieces.size() && !job.stopped; ++p) {
        if (p > 0) {
            output += " ";
            job.emit(" ");
        }
        job.stats.sourceTokens += static_cast<std::int64_t>(pieces[p].size());
        StreamingDetokenizer stream(tokenizer);
        SearchOptions options;
        options.maxNewTokens = maxNew;
        options.eosIds = generation.eosIds.empty() ? std::vector<TokenId>{m.eosId()} : generation.eosIds;
        options.processors = &processors;
        options.onToken = [&](TokenId id) {
            if (job.stats.firstTokenSeconds < 0)
                job.stats.firstTokenSeconds = std::chrono::duration<double>(Clock::now() - job.start).count();
            ++job.stats.generatedTokens;
            if (job.request.beams == 1) job.emit(stream.push(id));
            return !job.stopped;
        };
        const std::vector<TokenId> prefix{generation.decoderStartId.value_or(m.decoderStartId())};
        EncoderDecoderSession session(m, m.encode(pieces[p]), job.request.beams, 1 + maxNew);
        std::vector<TokenId> generated;
        if (job.request.beams == 1) {
            generated = greedySearch(session, prefix, options);
            job.emit(stream.finish());
        } else {
            generated = beamSearch(session, prefix, options, {job.request.beams, generation.lengthPenalty, generation.earlyStopping});
            job.stats.generatedTokens += static_cast<std::int64_t>(generated.size());
            job.emit(tokenizer.decode(generated));
        }
        output += tokenizer.decode(generated);
    }
    return output;
}

std::string Translator::translate(const TranslationRequest& request, TranslationStats* statsOut) const {
    TranslationStats stats;
    if (!simdjson::validate_utf8(request.text.data(), request.text.size())) throw Error("input", "the text is not valid UTF-8");
    if (!model_->encoderDecoder && !model_->causal) throw Error("config", model_->id() + ": this model cannot translate");
    model_->requireTokenizer();
    if (model_->causal && !chat_) throw Error("tokenizer", model_->id() + ": no tokenizer.json with HY-MT's chat tokens");
    const bool prompted = chat_.has_value();
    if (!prompted && (request.sample || !request.glossary.empty() || !request.context.empty() || request.formatted))
        throw Error("unsupported", "sampling, glossaries, context and formatted text need a model with prompts (HY-MT); " + model_->id() +
                                       " is " + model_->architecture);
    std::string languageToken;
    if (prompted) {
        if (!findLanguage(request.to)) throw Error("input", "unknown target language '" + request.to + "'");
    } else if (!modelLanguageTokens_.empty()) {
        auto token = languageTokenFor(request.to, modelLanguageTokens_);
        if (!token) {
            std::string known;
            for (const auto& code : targets_)
                known += (known.empty() ? "" : " ") + code;
            throw Error("input", model_->id() + " cannot translate into '" + request.to + "' (it knows: " + known + ")");
        }
        languageToken = *token;
    } else if (!pair_.first.empty() &&
               ((!request.to.empty() && request.to != pair_.second) || (!request.from.empty() && request.from != pair_.first))) {
        throw Error("input", model_->id() + " translates " + pair_.first + " to " + pair_.second + " only, not " + request.from + " to " +
                                 request.to);
    }

    c10::InferenceMode guard;
    Job job{request, stats};
    std::string output;
    const auto lines = splitLines(request.text);
    const std::string sentenceGap = writesWithoutSpaces(request.to) ? "" : " ";
    for (std::size_t l = 0; l < lines.size() && !job.stopped; ++l) {
        if (l > 0) {
            output += "\n";
            job.emit("\n");
        }
        if (prompted) {
            output += translateParagraphWithPrompt(lines[l], sentenceGap, job);
            continue;
        }
        const auto sentences = splitSentences(lines[l], request.from.empty() ? "en" : request.from);
        for (std::size_t s = 0; s < sentences.size() && !job.stopped; ++s) {
            if (s > 0) {
                output += sentenceGap;
                job.emit(sentenceGap);
            }
            output += translateSentence(sentences[s], languageToken, job);
        }
    }
    stats.stopped = job.stopped;
    stats.totalSeconds = std::chrono::duration<double>(Clock::now() - job.start).count();
    log::info({model_->id(), request.requestId}, "translated {} source tokens into {} tokens in {:.3f} s (first token {:.3f} s){}",
              stats.sourceTokens, stats.generatedTokens, stats.totalSeconds, stats.firstTokenSeconds, stats.stopped ? ", stopped" : "");
    if (statsOut) *statsOut = stats;
    return output;
}

}  // namespace dragoman
