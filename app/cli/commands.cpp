#include "cli/commands.h"
#include "cli/command_line.h"
#include "cli/dev_command_loader.h"
#include "devcli/dev_commands.h"

namespace dragoman::cli {
namespace {

std::function<int(const QStringList&)> developer(const char* name) {
    return [name](const QStringList& args) { return runDeveloperCommand(name, args); };
}

}  // namespace

const std::vector<Command>& commands() {
    static const std::vector<Command> table{
        {"inspect", "Validate a .safetensors file and list its tensors", runInspect},
        {"tokenize", "Source-side token ids of a text", runTokenize},
        {"detokenize", "Text of a list of token ids", runDetokenize},
        {"logits", "Write a model's logits for given ids to a .safetensors file", developer("logits")},
        {"generate", "Generate token ids (greedy or beam search)", runGenerate},
        {"translate", "Translate text or each line of stdin", runTranslate},
        {"translate-file", "Translate a document, keeping its structure", runTranslateFile},
        {"prompt", "Print the exact prompt a model receives for a translation", runPrompt},
        {"models", "List, import, verify and forget models (list | import | verify | forget)", runModels},
        {"quantize", "Write a smaller, faster copy of a model with int8 or FP8 weights", runQuantize},
        {"serve", "Serve the model over HTTP (OpenAI and LibreTranslate APIs)", runServe},
        {"bench", "Benchmarks (load | generate | translate | adapters | weights)", developer("bench")},
        {"make-synthetic", "Write a random-weight checkpoint with real shapes", runMakeSynthetic},
    };
    return table;
}

}  // namespace dragoman::cli
