#pragma once
// The --model option shared by the commands that use a model: a folder, a store id, or the default model.
#include "cli/command_line.h"
#include "dragoman.h"

#include <memory>
#include <string>

namespace dragoman::cli {

QCommandLineOption modelOption();
// --adapter A: a PEFT LoRA adapter folder applied on top of the model.
QCommandLineOption adapterOption();
// The adapter --adapter names, bound to `model`; null without the option.
std::shared_ptr<const LoraSet> adapterFor(const CommandLine& cmd, const Model& model);
// What --model names, or the default model's id. Throws Error("model_not_found") when there is none.
std::string modelArgument(const CommandLine& cmd);
// Sizes the engine's threads (once) and loads the model --model names, ready to translate.
std::shared_ptr<const Model> loadModelOption(const CommandLine& cmd);

// How many lines or segments `model` translates together by default (translate --batch, translate-file).
inline int defaultTogether(const Model& model) {
    return defaultTogether(model.description());
}

// --from and --to, where given, name languages of the table (--from also "auto" where `autoSource`); throws
// UsageError otherwise.
void checkLanguageOptions(const CommandLine& cmd, bool autoSource = false);

// `from` as given; for "auto", the language `text` is written in as `model` reads it (sourceLanguageFor).
// `strict` (`translate --text`): a text plainly in a language the model does not read is refused with
// Error("input") instead of being translated as if it were the model's source.
std::string sourceFor(const std::string& from, const std::string& text, const ModelDescription& model, bool strict);

}  // namespace dragoman::cli
