#include "runtime/translator.h"

#include "util/error.h"
#include "util/log.h"

#include <simdjson.h>
#include <torch/torch.h>

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

}  // namespace

Translator::Translator(std::shared_ptr<const RunnableModel> model) : model_(std::move(model)), strategy_(model_->requireStrategy()) {}

std::string Translator::translate(const TranslationRequest& request, TranslationStats* statsOut) const {
    TranslationStats stats;
    if (!simdjson::validate_utf8(request.text.data(), request.text.size())) throw Error("input", "the text is not valid UTF-8");
    strategy_.check(request);

    c10::InferenceMode guard;
    TranslationJob job{request, stats};
    std::string output;
    const auto lines = splitLines(request.text);
    for (std::size_t l = 0; l < lines.size() && job.keepGoing(); ++l) {
        if (l > 0) {
            output += "\n";
            job.emit("\n");
        }
        output += strategy_.translateParagraph(lines[l], job);
    }
    stats.stopped = job.stopped;
    stats.totalSeconds = std::chrono::duration<double>(Clock::now() - job.start).count();
    log::info({model_->id(), request.requestId}, "translated {} source tokens into {} tokens in {:.3f} s (first token {:.3f} s){}",
              stats.sourceTokens, stats.generatedTokens, stats.totalSeconds, stats.firstTokenSeconds, stats.stopped ? ", stopped" : "");
    if (statsOut) *statsOut = stats;
    return output;
}

}  // namespace dragoman
