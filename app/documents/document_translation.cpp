#include "documents/document_translation.h"

#include "documents/data_formats.h"
#include "documents/inline_markup.h"
#include "documents/segmented_document.h"
#include "dragoman.h"

#include <QDir>
#include <QFileInfo>

#include <algorithm>
#include <atomic>
#include <exception>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

namespace dragoman::documents {
namespace {

// Whether a formatted answer keeps the source's markup as the document needs it: a span whose words had letters
// still has some (a bold word or a link's text must not vanish), and the empty pairs (standalone codes, an
// image, a line break, the halves of a code split in two) stay in their order.
bool keepsMarkup(const std::vector<MarkedPart>& source, const std::vector<MarkedPart>& answer) {
    const auto describe = [](const std::vector<MarkedPart>& parts, std::vector<int>& emptyOrder) {
        std::map<int, std::string> words;
        std::vector<int> open;
        for (std::size_t i = 0; i < parts.size(); ++i) {
            const auto& part = parts[i];
            if (part.kind == MarkedPart::Kind::Open) {
                open.push_back(part.span);
                if (i + 1 < parts.size() && parts[i + 1].kind == MarkedPart::Kind::Close) emptyOrder.push_back(part.span);
            } else if (part.kind == MarkedPart::Kind::Close) {
                open.pop_back();
            } else {
                for (const int span : open)
                    words[span] += part.text;
            }
        }
        return words;
    };
    std::vector<int> sourceEmpty, answerEmpty;
    const auto sourceWords = describe(source, sourceEmpty);
    auto answerWords = describe(answer, answerEmpty);
    for (const auto& [span, words] : sourceWords)
        if (hasLetters(words) && !hasLetters(answerWords[span])) return false;
    // The source's empty pairs, in the answer's order (the answer may have filled none of them).
    std::vector<int> kept;
    for (const int span : answerEmpty)
        if (std::find(sourceEmpty.begin(), sourceEmpty.end(), span) != sourceEmpty.end()) kept.push_back(span);
    return kept == sourceEmpty;
}

// Translates each distinct segment once (headers, repeated cells), in order, reporting progress.
class SegmentTranslator {
public:
    explicit SegmentTranslator(const DocumentRequest& request) : request_(request) {}

    // `tagged` (empty: none) marks the segments with inline markup.
    void add(const std::vector<std::string>& segments, const std::vector<bool>& tagged = {}) {
        for (std::size_t i = 0; i < segments.size(); ++i) {
            const auto k = key(segments[i], i < tagged.size() && tagged[i]);
            if (done_.emplace(k, std::string()).second) order_.push_back(k);
        }
    }
    void run() {
        const auto total = order_.size();
        std::vector<std::string> translations(total);
        std::atomic<std::size_t> next = 0;
        std::size_t finished = 0;
        std::atomic<bool> failed = false;
        std::mutex mutex;  // progress calls, the count of finished segments and the first error
        std::exception_ptr error;
        // Progress counts finished segments: with 32 in flight, segments started would put a short document at its
        // end at once.
        if (request_.progress) request_.progress(0, total);
        // Each worker takes the next segment until none is left or one failed (the others end theirs).
        auto work = [&] {
            for (std::size_t i = next++; i < total && !failed; i = next++) {
                try {
                    translations[i] = order_[i].first ? translateTagged(order_[i].second) : request_.translate(order_[i].second);
                    if (request_.progress) {
                        std::lock_guard lock(mutex);
                        request_.progress(++finished, total);
                    }
                } catch (...) {
                    std::lock_guard lock(mutex);
                    if (!error) error = std::current_exception();
                    failed = true;
                }
            }
        };
        const auto threads = std::min<std::size_t>(static_cast<std::size_t>(std::max(1, request_.parallel)), total);
        if (threads <= 1) {
            work();
        } else {
            std::vector<std::thread> workers;
            for (std::size_t t = 0; t < threads; ++t)
                workers.emplace_back([&] {
                    const YieldToKernelThreads yielding;  // the segments' steps run on the model's threads
                    work();
                });
            for (auto& w : workers)
                w.join();
        }
        if (error) std::rethrow_exception(error);
        for (std::size_t i = 0; i < total; ++i)
            done_[order_[i]] = order_[i].first ? std::move(translations[i]) : finish(order_[i].second, std::move(translations[i]));
    }
    // A segment's translation as the document gets it.
    std::string finish(const std::string& source, std::string translation) {
        // A segment is one line of its document; a model that writes line breaks (HY-MT can) must not add
        // lines, which would end a subtitle cue or a Markdown block early.
        if (source.find('\n') == std::string::npos)
            for (auto& c : translation)
                if (c == '\n' || c == '\r') c = ' ';
        // A model can answer a lone word or a fragment with nothing (the small bundled one does, for "very"
        // between HTML tags): the source text stays rather than vanish from the document.
        if (translation.find_first_not_of(" \t\r\n") == std::string::npos) {
            translation = source;
            ++keptSource_;
        }
        return translation;
    }
    std::vector<std::string> of(const std::vector<std::string>& segments, const std::vector<bool>& tagged = {}) const {
        std::vector<std::string> out;
        for (std::size_t i = 0; i < segments.size(); ++i)
            out.push_back(done_.at(key(segments[i], i < tagged.size() && tagged[i])));
        return out;
    }
    std::size_t count() const { return order_.size(); }
    std::size_t keptSource() const { return keptSource_; }
    std::size_t tagged() const {
        return static_cast<std::size_t>(std::count_if(order_.begin(), order_.end(), [](const Key& k) { return k.first; }));
    }
    std::size_t tagsLost() const { return tagsLost_; }

private:
    // Tagged segments are keyed apart: the same words as plain text are another segment.
    using Key = std::pair<bool, std::string>;
    static Key key(const std::string& segment, bool tagged) { return {tagged, segment}; }

    // Whole, with the formatted prompt, where the model has one and its answer keeps every tag in place;
    // otherwise the text between the tags piece by piece.
    std::string translateTagged(const std::string& tagged) {
        const int spans = spanCount(tagged);
        const auto source = parseMarked(tagged, spans);
        if (!source) return finish(tagged, request_.translate(tagged));  // the formats never write these
        if (request_.translateFormatted) {
            auto answer = request_.translateFormatted(tagged);
            const auto first = answer.find_first_not_of(" \t\r\n"), last = answer.find_last_not_of(" \t\r\n");
            answer = first == std::string::npos ? std::string() : answer.substr(first, last - first + 1);
            if (tagged.find('\n') == std::string::npos)  // line breaks only where the source has them (see finish())
                for (auto& c : answer)
                    if (c == '\n' || c == '\r') c = ' ';
            const auto parts = parseMarked(answer, spans);
            if (parts && hasLetters(withoutTags(*parts)) && keepsMarkup(*source, *parts)) return joinMarked(*parts);
            ++tagsLost_;
        }
        auto parts = *source;
        for (auto& part : parts) {
            const auto [first, end] = translatableCore(part.text);
            if (part.kind != MarkedPart::Kind::Text || first == std::string::npos) continue;
            const auto words = part.text.substr(first, end - first);
            part.text = part.text.substr(0, first) + finish(words, request_.translate(words)) + part.text.substr(end);
        }
        return joinMarked(parts);
    }

    const DocumentRequest& request_;
    std::map<Key, std::string> done_;
    std::vector<Key> order_;
    std::atomic<std::size_t> keptSource_ = 0;  // finish() runs on the workers for tagged segments' pieces
    std::atomic<std::size_t> tagsLost_ = 0;
};

// A data document translated whole with the structured prompt, where the model has one and its answer keeps
// the document's structure; values whose placeholders it changed are translated again one at a time.
std::optional<std::vector<std::string>> translateWhole(const ReadDocument& document, const std::vector<std::string>& segments,
                                                       const DocumentRequest& request) {
    const auto format = document.dataFormat();
    if (format.empty() || !request.translateStructured || segments.empty()) return std::nullopt;
    const auto text = document.dataText();
    if (text.size() > kMaxStructuredBytes) return std::nullopt;
    if (request.progress) request.progress(0, segments.size());
    auto translations = document.translationsIn(request.translateStructured(text, format));
    if (!translations) {
        logMessage(LogLevel::Warning, request.input.toStdString() + ": the model's translation of the whole " + format +
                                          " document changed its structure; translating its values one at a time");
        return std::nullopt;
    }
    std::vector<std::string> again;
    for (std::size_t i = 0; i < segments.size(); ++i)
        if (!keepsPlaceholders(segments[i], (*translations)[i]) || (*translations)[i].find_first_not_of(" \t\r\n") == std::string::npos)
            again.push_back(segments[i]);
    if (!again.empty()) {
        auto quiet = request;
        quiet.progress = nullptr;
        SegmentTranslator translator(quiet);
        translator.add(again);
        translator.run();
        for (std::size_t i = 0; i < segments.size(); ++i)
            if (std::find(again.begin(), again.end(), segments[i]) != again.end())
                (*translations)[i] = translator.of({segments[i]}).front();
    }
    if (request.progress) request.progress(segments.size(), segments.size());
    return translations;
}

}  // namespace

std::vector<std::string> translateSegments(const SegmentedDocument& document, const DocumentRequest& request) {
    SegmentTranslator translator(request);
    translator.add(document.segments, document.tagged);
    translator.run();
    return translator.of(document.segments, document.tagged);
}

namespace {

// The structured and formatted prompts carry nothing else: no glossary, context, style, preferences or delimiters.
bool carriesNoInstructions(const TranslationRequest& sample) {
    return sample.glossary.empty() && sample.context.empty() && sample.style.empty() && sample.preferences.empty() &&
           !sample.keepDelimiters;
}

}  // namespace

bool takesStructuredPrompt(const std::string& modelProfile, const TranslationRequest& sample) {
    const auto& profile = sample.promptProfile.empty() ? modelProfile : sample.promptProfile;
    return profile == "hy-mt2" && carriesNoInstructions(sample);
}

bool takesFormattedPrompt(bool chat, const TranslationRequest& sample) {
    return chat && carriesNoInstructions(sample) && sample.structuredFormat.empty();
}

QString defaultOutputPath(const QString& input, const QString& targetLanguage) {
    const QFileInfo info(input);
    const auto* format = formatOf(input);
    const auto suffix = format ? format->outputSuffix(info.suffix()) : info.suffix();
    const auto stem = info.dir().filePath(info.completeBaseName() + "." + targetLanguage);
    auto candidate = stem + "." + suffix;
    for (int n = 2; QFileInfo::exists(candidate); ++n)
        candidate = QStringLiteral("%1 (%2).%3").arg(stem).arg(n).arg(suffix);
    return candidate;
}

DocumentResult translateDocument(const DocumentRequest& request) {
    const QFileInfo in(request.input);
    if (!in.exists()) throw Error("input", "no such file: " + request.input.toStdString());
    if (!in.isFile()) throw Error("input", request.input.toStdString() + " is not a file");
    const auto format = formatOf(request.input);
    if (!format)
        throw Error("input", request.input.toStdString() + ": unsupported document type '." + in.suffix().toStdString() +
                                 "' (supported: " + supportedPatterns().toStdString() + ")");
    if (in.size() > kMaxDocumentBytes)
        throw Error("input", request.input.toStdString() + " is " + std::to_string(in.size() >> 20) + " MiB; documents up to " +
                                 std::to_string(kMaxDocumentBytes >> 20) + " MiB are translated");
    DocumentResult result;
    result.format = format->name();
    result.output = request.output.isEmpty() ? defaultOutputPath(request.input, QString::fromStdString(request.to)) : request.output;
    const QFileInfo out(result.output);
    if (out.exists() || out.absoluteFilePath() == in.absoluteFilePath())
        throw Error("io", result.output.toStdString() + " exists; Dragoman never overwrites a file (choose another --out)");
    if (!out.absoluteDir().exists()) throw Error("io", "no such folder: " + out.absolutePath().toStdString());

    const auto document = format->read(request.input, {request.to, request.retranslate});
    // A format whose translation is another kind of file (a PDF's text) is not written under its own suffix: a .pdf
    // holding plain text would not open.
    if (const auto writes = format->outputSuffix(in.suffix());
        writes.compare(in.suffix(), Qt::CaseInsensitive) != 0 && out.suffix().compare(in.suffix(), Qt::CaseInsensitive) == 0)
        throw Error("input", "the translation of a " + format->name().toStdString() + " document is ." + writes.toStdString() +
                                 " text, not ." + out.suffix().toStdString() + ": name the output ." + writes.toStdString() +
                                 " (or leave --out out)");
    const auto segments = document->segments();
    result.keptAsIs = document->keptAsIs();
    auto translations = translateWhole(*document, segments, request);
    result.whole = translations.has_value();
    if (!translations) {
        const auto tagged = document->taggedSegments();
        SegmentTranslator translator(request);
        translator.add(segments, tagged);
        translator.run();
        translations = translator.of(segments, tagged);
        result.segments = translator.count();
        result.keptSource = translator.keptSource();
        result.tagged = translator.tagged();
        result.tagsLost = translator.tagsLost();
    } else {
        result.segments = segments.size();
    }
    for (std::size_t i = 0; i < segments.size(); ++i)
        if (!keepsPlaceholders(segments[i], (*translations)[i])) ++result.changedPlaceholders;
    document->write(result.output, *translations);
    return result;
}

}  // namespace dragoman::documents
