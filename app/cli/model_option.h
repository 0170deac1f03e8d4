#pragma once
// The --model option shared by the commands that use a model: a folder, a store id, or the default model.
#include "cli/command_line.h"
#include "runtime/runnable_model.h"
#include "store/model_store.h"

namespace dragoman::cli {

QCommandLineOption modelOption();
ModelEntry resolveModel(const CommandLine& cmd, const ModelStore& store);
// Sizes libtorch's threads (once) and opens the model named by --model, ready to run.
std::shared_ptr<RunnableModel> openModelOption(const CommandLine& cmd);

// --from and --to, where given, name languages of the table (text/languages.h); throws UsageError otherwise.
void checkLanguageOptions(const CommandLine& cmd);

// "1,2,3" -> ids; throws UsageError naming the option on anything else.
std::vector<std::int64_t> parseIds(const QString& text, const char* option);
std::string joinIds(const std::vector<std::int64_t>& ids);

}  // namespace dragoman::cli
