#include "runtime/language_token_strategy.h"

#include "decode/beam_search.h"
#include "decode/seq2seq_session.h"
#include "decode/seq2seq_steps.h"
#include "runtime/language_tokens.h"
#include "runtime/torch_backend.h"
#include "text/languages.h"
#include "text/marian_tokenizer.h"
#include "text/sentence_splitter.h"
#include "text/streaming_detokenizer.h"
#include "util/error.h"

#include <algorithm>

namespace dragoman {

LanguageTokenStrategy::LanguageTokenStrategy(const RunnableModel& model)
    : model_(model),
      network_(*model.seq2seq()),
      modelLanguageTokens_(model.requireTokenizer().languageTokens()),
      batcher_(seq2seqSteps(network_), kDecodedTogether, seq2seqPrompts(network_)) {
    targets_ = languagesCovered(modelLanguageTokens_);
    pair_ = readLanguagePair(model.loaded.entry.dir);
    // A multilingual model reads the source its tokenizer names where that is one language (opus-mt-en-ROMANCE),
    // else (a group, "mul": the bundled model) the languages it writes, as the window offers and `from: auto` judges.
    if (!modelLanguageTokens_.empty()) sources_ = findLanguage(pair_.first) ? std::vector<std::string>{pair_.first} : targets_;
}

std::string LanguageTokenStrategy::languageToken(const std::string& to) const {
    if (modelLanguageTokens_.empty()) return {};
    auto token = languageTokenFor(to, modelLanguageTokens_);
    if (!token) {
        std::string known;
        for (const auto& code : targets_)
            known += (known.empty() ? "" : " ") + code;
        throw Error("input", model_.id() + " cannot translate into '" + to + "' (it knows: " + known + ")");
    }
    return *token;
}

void LanguageTokenStrategy::check(const TranslationRequest& request) const {
    if (request.sample || !request.glossary.empty() || !request.context.empty() || request.formatted)
        throw Error("unsupported", "sampling, glossaries, context and formatted text need a model with prompts (HY-MT); " + model_.id() +
                                       " is " + model_.architecture);
    if (!request.style.empty() || !request.preferences.empty() || request.keepDelimiters || !request.structuredFormat.empty() ||
        !request.promptProfile.empty())
        throw Error("unsupported", "styles, preferences, delimiters, structured data and prompt profiles need a Hy-MT2 model; " +
                                       model_.id() + " is " + model_.architecture);
    languageToken(request.to);
    if (!sources_.empty() && !request.from.empty()) {
        const bool reads = std::any_of(sources_.begin(), sources_.end(),
                                       [&](const std::string& s) { return primaryLanguage(s) == primaryLanguage(request.from); });
        if (!reads) {
            std::string list;
            for (const auto& code : sources_)
                list += (list.empty() ? "" : " ") + code;
            throw Error("input", model_.id() + " cannot translate from '" + request.from + "' (it reads: " + list + ")");
        }
    }
    // A "mul" source (opus-mt-mul-en) reads any language.
    if (modelLanguageTokens_.empty() && !pair_.first.empty() &&
        ((!request.to.empty() && request.to != pair_.second) ||
         (!request.from.empty() && request.from != pair_.first && pair_.first != "mul")))
        throw Error("input", model_.id() + " translates " + pair_.first + " to " + pair_.second + " only, not " + request.from + " to " +
                                 request.to);
}

std::string LanguageTokenStrategy::translateParagraph(const std::string& paragraph, TranslationJob& job) const {
    const auto token = languageToken(job.request.to);
    const auto gap = job.sentenceGap();
    std::string output;
    const auto sentences = splitSentences(paragraph, job.request.from.empty() ? "en" : job.request.from);
    // A sentence longer than the model's positions is several pieces (sourcePieces), and the encoder's output for a
    // piece (its cross-attention keys and values) is megabytes: a pass takes at most 16 pieces, so a text of one
    // endless sentence is encoded as it is decoded, not all at once (60,000 words held a gigabyte).
    constexpr std::size_t kPiecesEncodedTogether = 16;
    struct Part {
        std::vector<std::vector<TokenId>> pieces;
        bool continuesSentence = false;  // joined to the part before by a space, not the gap between sentences
    };
    std::vector<Part> parts;
    // Half the output cap: a translation is rarely more than 1.5 times its source's tokens.
    const auto& generation = model_.generation;
    const auto outputCap = std::min<std::int64_t>(generation.maxLength.value_or(network_.maxPositions()), network_.maxPositions());
    const auto budget = static_cast<std::size_t>(std::max<std::int64_t>(16, outputCap / 2));
    std::vector<std::pair<std::string, bool>> clauses;  // and whether it continues the sentence before
    for (const auto& sentence : sentences) {
        bool first = true;
        for (auto& clause : clausesOf(sentence, budget)) {
            clauses.emplace_back(std::move(clause), !first);
            first = false;
        }
    }
    for (const auto& [sentence, continues] : clauses) {
        auto pieces = sourcePieces(sentence, token);
        for (std::size_t at = 0; at < pieces.size(); at += kPiecesEncodedTogether) {
            const auto end = std::min(pieces.size(), at + kPiecesEncodedTogether);
            parts.push_back({{std::make_move_iterator(pieces.begin() + static_cast<std::ptrdiff_t>(at)),
                              std::make_move_iterator(pieces.begin() + static_cast<std::ptrdiff_t>(end))},
                             at > 0 || continues});
        }
    }
    // The sources of a few parts at a time go through the encoder in one pass, with whatever other requests have
    // waiting (StepBatcher::together); then each part is decoded.
    for (std::size_t first = 0; first < parts.size() && job.keepGoing();) {
        std::size_t end = first, count = 0;
        while (end < parts.size() && (end == first || count + parts[end].pieces.size() <= kPiecesEncodedTogether))
            count += parts[end++].pieces.size();
        SourcePrompt prompt{{}, job.request.adapter.get(), {}};
        for (auto i = first; i < end; ++i)
            for (const auto& piece : parts[i].pieces)
                prompt.sources.push_back(&piece);
        if (!prompt.sources.empty()) batcher_.together(&prompt);
        auto memory = prompt.memories.begin();
        for (auto i = first; i < end && job.keepGoing(); ++i) {
            if (i > 0) {
                const auto& between = parts[i].continuesSentence ? std::string(" ") : gap;
                output += between;
                job.emit(between);
            }
            const auto& part = parts[i].pieces;
            output += decodeSentence(part, {memory, memory + static_cast<std::ptrdiff_t>(part.size())}, job);
            memory += static_cast<std::ptrdiff_t>(part.size());
        }
        first = end;
    }
    return output;
}

std::vector<std::string> LanguageTokenStrategy::prompts(const std::string& paragraph, const TranslationRequest& request) const {
    const auto token = languageToken(request.to);
    std::vector<std::string> texts;
    for (const auto& sentence : splitSentences(paragraph, request.from.empty() ? "en" : request.from))
        texts.push_back(token.empty() ? sentence : token + " " + sentence);
    return texts;
}

std::vector<std::string> LanguageTokenStrategy::clausesOf(const std::string& sentence, std::size_t budget) const {
    // A token holds at least one byte: a sentence of fewer bytes than the budget is never tokenized here.
    if (sentence.size() <= budget || model_.requireTokenizer().encodeText(sentence).size() <= budget) return {sentence};
    const auto middle = sentence.size() / 2;
    std::size_t cut = std::string::npos;  // where the second clause starts
    const auto nearer = [&](std::size_t at) {
        return cut == std::string::npos || (at > middle ? at - middle : middle - at) < (cut > middle ? cut - middle : middle - cut);
    };
    for (const std::string_view mark : {", ", "; ", ": ", "\uFF0C", "\uFF1B", "\uFF1A", "\u3001"})
        for (auto at = sentence.find(mark); at != std::string::npos; at = sentence.find(mark, at + 1))
            if (const auto after = at + mark.size(); after < sentence.size() && nearer(after)) cut = after;
    if (cut == std::string::npos)
        for (auto at = sentence.find(' '); at != std::string::npos; at = sentence.find(' ', at + 1))
            if (at > 0 && at + 1 < sentence.size() && nearer(at + 1)) cut = at + 1;
    if (cut == std::string::npos) return {sentence};  // one endless word: sourcePieces() slices it
    auto head = sentence.substr(0, cut), tail = sentence.substr(cut);
    while (!head.empty() && head.back() == ' ')
        head.pop_back();
    auto clauses = clausesOf(head, budget);
    for (auto& clause : clausesOf(tail, budget))
        clauses.push_back(std::move(clause));
    return clauses;
}

std::vector<std::vector<TokenId>> LanguageTokenStrategy::sourcePieces(const std::string& sentence, const std::string& languageToken) const {
    const auto& m = network_;
    // The language token goes in by id: spelled into the text, a sentence holding ">> ... <<" ("click >> or <<")
    // would be read as one long unknown language code, as transformers reads it, and lose its words.
    const auto& tokenizer = model_.requireTokenizer();
    auto ids = tokenizer.encodeText(sentence);
    if (!languageToken.empty()) {
        const auto id = tokenizer.idOf(languageToken);
        if (!id) throw Error("tokenizer", model_.id() + " has no token " + languageToken + " in its vocabulary");
        ids.insert(ids.begin(), *id);
    }
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
    return pieces;
}

std::string LanguageTokenStrategy::decodeSentence(const std::vector<std::vector<TokenId>>& pieces,
                                                  const std::vector<std::shared_ptr<const SourceMemory>>& sources,
                                                  TranslationJob& job) const {
    const auto& m = network_;
    const auto& tokenizer = model_.requireTokenizer();
    const auto& generation = model_.generation;
    const std::int64_t maxLength = std::min<std::int64_t>(generation.maxLength.value_or(m.maxPositions()), m.maxPositions());
    const std::int64_t maxNew = std::max<std::int64_t>(1, maxLength - 1);
    const LogitsProcessors processors(generation, 1 + maxNew);
    std::string output;
    for (std::size_t p = 0; p < pieces.size() && job.keepGoing(); ++p) {
        if (p > 0) {
            output += " ";
            job.emit(" ");
        }
        job.stats.sourceTokens += static_cast<std::int64_t>(pieces[p].size());
        StreamingDetokenizer stream(tokenizer);
        const bool streaming = job.streams() && job.request.beams == 1;
        SearchOptions options;
        // The request's cap (over all its sentences) cuts the search short; the processors still count to the model's
        // own maximum, so the tokens are the first ones of the uncapped translation.
        options.maxNewTokens = std::min(maxNew, job.tokensLeft().value_or(maxNew));
        options.eosIds = generation.eosIds.empty() ? std::vector<TokenId>{m.eosId()} : generation.eosIds;
        options.processors = &processors;
        options.onToken = [&](TokenId id) {
            job.tokenArrived();
            if (streaming) job.emit(stream.push(id));
            return job.keepGoing();
        };
        options.onTokenAnyThread = !streaming;  // then it only counts and checks the cancel flag
        const std::vector<TokenId> prefix{generation.decoderStartId.value_or(m.decoderStartId())};
        const auto& adapter = job.request.adapter;
        Seq2SeqSession session(m, sources[p], job.request.beams, 1 + maxNew, adapter, &batcher_);
        std::vector<TokenId> generated;
        if (job.request.beams == 1) {
            generated = greedySearch(session, prefix, options);
            if (streaming) job.emit(stream.finish());
        } else {
            generated = beamSearch(session, prefix, options, {job.request.beams, generation.lengthPenalty, generation.earlyStopping});
            job.stats.generatedTokens += static_cast<std::int64_t>(generated.size());
            job.emit(tokenizer.decode(generated));
        }
        // Cut short: by the request's cap before an end-of-sequence token, or at the model's own cap, where
        // forced_eos_token_id puts one there whatever came before.
        const bool ended =
            !generated.empty() && std::find(options.eosIds.begin(), options.eosIds.end(), generated.back()) != options.eosIds.end();
        if (!job.stopped && (!ended || static_cast<std::int64_t>(generated.size()) >= maxNew)) job.stats.truncated = true;
        output += tokenizer.decode(generated);
    }
    return output;
}

}  // namespace dragoman
