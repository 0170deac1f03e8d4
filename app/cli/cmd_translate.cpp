#include "cli/command_line.h"
#include "cli/commands.h"
#include "cli/model_option.h"
#include "cli/ordered_lines.h"
#include "cli/prompt_options.h"
#include "cli/server_option.h"

#include <iostream>
#include <limits>

namespace dragoman::cli {
namespace {

// Line breaks as spaces (a break written as \r\n becomes one space).
std::string withoutLineBreaks(std::string text) {
    std::string out;
    out.reserve(text.size());
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '\r' && i + 1 < text.size() && text[i + 1] == '\n') continue;
        out += text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
    }
    return out;
}

}  // namespace

// translate [--model M] --from L --to L [--text T] [--stream] [--beams K]: T, or each line of stdin.
int runTranslate(const QStringList& args) {
    CommandLine cmd(QStringLiteral("dragoman-cli translate"), QStringLiteral("Translate text, or each line of stdin."));
    cmd.addOption(modelOption());
    cmd.addOption(adapterOption());
    cmd.addOption(
        {QStringLiteral("from"), QStringLiteral("Source language code, or auto: each text's own, detected"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("to"), QStringLiteral("Target language code"), QStringLiteral("L")});
    cmd.addOption({QStringLiteral("text"), QStringLiteral("Text to translate (default: each line of stdin)"), QStringLiteral("T")});
    cmd.addOption({QStringLiteral("stream"), QStringLiteral("Print the text as tokens arrive")});
    cmd.addOption({QStringLiteral("beams"), QStringLiteral("Beam search with K beams (default: greedy)"), QStringLiteral("K")});
    cmd.addOption({QStringLiteral("sample"), QStringLiteral("Sample with the model's recommended settings")});
    cmd.addOption({QStringLiteral("seed"), QStringLiteral("Seed for --sample"), QStringLiteral("S")});
    addPromptOptions(cmd);
    addServerOptions(cmd);
    cmd.addOption({QStringLiteral("batch"),
                   QStringLiteral("Up to N stdin lines decoded together, printed in order (default 8 for chat models such as HY-MT, else "
                                  "16; the output is the same as with 1)"),
                   QStringLiteral("N")});
    if (!cmd.parse(args)) return kExitOk;
    if (!cmd.isSet("to")) throw UsageError("--to is required");
    checkLanguageOptions(cmd, true);
    const auto beams = cmd.intValue("beams", 1, 1, 16);
    const auto remote = remoteEngineOption(cmd);
    const auto model = remote ? nullptr : loadModelOption(cmd);
    const auto adapter = remote ? nullptr : adapterFor(cmd, *model);
    const auto prompt = readPromptOptions(cmd);
    if (cmd.isSet("seed") && !cmd.isSet("sample")) throw UsageError("--seed needs --sample");
    const auto seed = static_cast<std::uint64_t>(cmd.intValue("seed", 0, 0, std::numeric_limits<std::int64_t>::max()));
    const bool stream = cmd.isSet("stream");

    std::uint64_t requestId = 0;
    const auto from = cmd.value("from").toStdString(), to = cmd.value("to").toStdString();
    const auto described = from != "auto" ? ModelDescription{} : remote ? describeServerModel(*remote) : model->description();
    // The line's output, with its line break (printed as it streams with --stream).
    // One text given is refused when it is plainly in a language the model does not read; a line of stdin in another
    // language goes as the model's source, so one odd line does not end the stream.
    const bool strict = cmd.isSet("text");
    auto translateOne = [&](const std::string& text, std::uint64_t id) {
        try {
            TranslationRequest request{text, sourceFor(from, text, described, strict), to, beams, id, {}};
            request.sample = cmd.isSet("sample");
            request.seed = seed;
            prompt.applyTo(request);
            request.adapter = adapter;
            // One line in, one line out: a line break the model writes (a chat model may) would shift every line after it.
            const bool oneLine = text.find('\n') == std::string::npos;
            if (stream)
                request.onDelta = [oneLine](std::string_view delta) {
                    return print(oneLine ? withoutLineBreaks(std::string(delta)) : std::string(delta));  // false: stop
                };
            const auto output = remote ? remote->translate(request) : model->translate(request);
            return stream ? std::string("\n") : (oneLine ? withoutLineBreaks(output) : output) + "\n";
        } catch (const Error& e) {
            if (strict || dynamic_cast<const Cancelled*>(&e)) throw;
            throw Error(e.category(), "line " + std::to_string(id) + ": " + e.detail());  // which of the lines read
        }
    };
    // Lines in flight together share the model's decoding steps (engine/decode/step_batcher.h); each keeps its
    // own state, so a line's output is the same whatever runs beside it. Streamed output goes one line at a time.
    // (Checked with --text too, where there is one line: a bad value is a usage error either way.)
    const auto batchAsked = cmd.intValue("batch", remote ? kRemoteConcurrency : defaultTogether(*model), 1, 256);
    if (cmd.isSet("text")) {
        print(translateOne(cmd.value("text").toStdString(), ++requestId));
        checkOutput();
        return kExitOk;
    }
    requireTextOnStdin();
    const auto batch = stream ? 1 : batchAsked;
    if (batch == 1) {
        for (std::string line; std::getline(std::cin, line);) {
            print(translateOne(line, ++requestId));
            checkOutput();  // stops at the first failed write rather than translating the rest for nobody
        }
    } else {
        // A translation model decoding as many lines as it takes at once encodes the sources of as many more
        // together meanwhile (StepBatcher): they wait in flight, translated in the same order and to the same text.
        const int workers = remote || beams > 1 ? static_cast<int>(batch) : requestsInFlight(model->description(), static_cast<int>(batch));
        translateLinesInOrder(std::cin, workers, translateOne, [](const std::string& output) {
            print(output);
            checkOutput();
        });
    }
    return kExitOk;
}

}  // namespace dragoman::cli
