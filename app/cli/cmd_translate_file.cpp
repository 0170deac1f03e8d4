#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_option.h"
#include "cli/prompt_options.h"
#include "cli/server_option.h"
#include "documents/document_translation.h"

#include <unistd.h>

#include <atomic>
#include <cstdio>

namespace dragoman::cli {

// translate-file IN [--model M] [--from L] --to L [--out PATH]: prints the output path.
int runTranslateFile(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli translate-file"),
                    QStringLiteral("Translate a document, keeping its structure. Supported: ") + documents::supportedPatterns());
    cmd.addPositional(QStringLiteral("IN"), QStringLiteral("The document to translate (never modified)"));
    cmd.addOption(modelOption());
    cmd.addOption(adapterOption());
    cmd.addOption(
        {QStringLiteral("from"), QStringLiteral("Source language code, or auto: each paragraph's own, detected"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("to"), QStringLiteral("Target language code"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("out"), QStringLiteral("Output path (default: IN's name with the language code; never an existing file)"),
                   QStringLiteral("PATH")});
    cmd.addOption({QStringLiteral("beams"), QStringLiteral("Beam search with K beams (default: greedy)"), QStringLiteral("K")});
    addPromptOptions(cmd);
    cmd.addOption({QStringLiteral("retranslate"), QStringLiteral("PO catalogs: translate the entries that have a translation too")});
    addServerOptions(cmd);
    cmd.addOption({QStringLiteral("concurrency"),
                   QStringLiteral("Segments in flight at once (default: 8 on a server or with a chat model, else 16)"),
                   QStringLiteral("N")});
    if (!cmd.parse(args, 1, 1)) return kExitOk;
    const auto positional = cmd.positional();
    if (!cmd.isSet("to")) throw UsageError("--to is required");
    checkLanguageOptions(cmd, true);
    const auto beams = cmd.intValue("beams", 1, 1, 16);
    const auto prompt = readPromptOptions(cmd);
    // The document is checked before the model loads: a wrong file fails at once.
    if (!documents::formatOf(positional[0]))
        throw Error("input", positional[0].toStdString() +
                                 ": unsupported document type (supported: " + documents::supportedPatterns().toStdString() + ")");
    const auto remote = remoteEngineOption(cmd);
    const auto model = remote ? nullptr : loadModelOption(cmd);
    const auto adapter = remote ? nullptr : adapterFor(cmd, *model);
    std::atomic<std::uint64_t> requestId = 0;
    const auto from = cmd.value("from").toStdString();
    const auto described = from != "auto" ? ModelDescription{} : remote ? describeServerModel(*remote) : model->description();
    // A paragraph quoted in another language keeps the job going: it goes as the model's source.
    auto sourceOf = [&](const std::string& text) { return sourceFor(from, text, described, false); };
    documents::DocumentRequest request;
    request.input = positional[0];
    request.output = cmd.value("out");
    request.to = cmd.value("to").toStdString();
    request.retranslate = cmd.isSet("retranslate");
    // Segments decode together (the model shares their steps); model->translate() is safe from several threads. A
    // translation model gets as many more in flight, their sources encoded together while the others decode.
    const auto together = static_cast<int>(cmd.intValue("concurrency", remote ? kRemoteConcurrency : defaultTogether(*model), 1, 64));
    request.parallel = remote || beams > 1 ? together : requestsInFlight(model->description(), together);
    request.translate = [&](const std::string& text) {
        TranslationRequest segment{text, sourceOf(text), request.to, beams, ++requestId, {}};
        prompt.applyTo(segment);
        segment.adapter = adapter;
        return remote ? remote->translate(segment) : model->translate(segment);
    };
    // Data documents (JSON, YAML) go whole with Hy-MT2's structured prompt, which carries no other instruction.
    TranslationRequest sample;
    prompt.applyTo(sample);
    const auto modelProfile = remote ? remote->promptProfile() : model->description().promptProfile;
    if (documents::takesStructuredPrompt(modelProfile, sample) && (remote ? remote->chat() : model->description().prompts))
        request.translateStructured = [&](const std::string& text, const std::string& format) {
            TranslationRequest whole{text, sourceOf(text), request.to, beams, ++requestId, {}};
            whole.structuredFormat = format;
            whole.promptProfile = prompt.profile;
            whole.adapter = adapter;
            return remote ? remote->translate(whole) : model->translate(whole);
        };
    // Segments with inline markup (bold words, links, XLIFF codes) go whole with HY-MT's formatted-text prompt.
    if (documents::takesFormattedPrompt(remote ? remote->chat() : model->description().prompts, sample))
        request.translateFormatted = [&](const std::string& tagged) {
            TranslationRequest segment{tagged, sourceOf(tagged), request.to, beams, ++requestId, {}};
            segment.formatted = true;
            segment.promptProfile = prompt.profile;
            segment.adapter = adapter;
            return remote ? remote->translate(segment) : model->translate(segment);
        };
    // Progress for a person at a terminal; scripts reading stdout get only the output path.
    const bool terminal = ::isatty(STDERR_FILENO) == 1;
    if (terminal)
        request.progress = [](std::size_t done, std::size_t total) {
            std::fprintf(stderr, "\rtranslating: %zu of %zu segments%s", done, total, done == total ? "\n" : "");
            std::fflush(stderr);
        };
    const auto result = documents::translateDocument(request);
    // A few notes are enough to find the places; the count tells how many there are.
    constexpr std::size_t kNotesShown = 5;
    for (std::size_t i = 0; i < result.keptAsIs.size() && i < kNotesShown; ++i)
        std::fprintf(stderr, "warning: %s: %s\n", request.input.toUtf8().constData(), result.keptAsIs[i].c_str());
    if (result.keptAsIs.size() > kNotesShown)
        std::fprintf(stderr, "warning: %s: %zu more places kept untranslated\n", request.input.toUtf8().constData(),
                     result.keptAsIs.size() - kNotesShown);
    if (result.keptSource > 0)
        std::fprintf(stderr, "warning: the model returned nothing for %zu of %zu segments; their source text was kept\n", result.keptSource,
                     result.segments);
    if (result.tagsLost > 0)
        std::fprintf(
            stderr,
            "note: the model's answer lost the inline formatting of %zu of %zu formatted segments; their pieces were translated apart\n",
            result.tagsLost, result.tagged);
    if (result.changedPlaceholders > 0)
        std::fprintf(stderr, "warning: %zu of %zu segments have other placeholders ({name}, %%s, ...) than their source; check them\n",
                     result.changedPlaceholders, result.segments);
    print(result.output + "\n");
    return kExitOk;
}

}  // namespace dragoman::cli
