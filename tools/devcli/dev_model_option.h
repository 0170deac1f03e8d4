#pragma once
// --model for the developer commands, which need the engine's internals (the network, the tokenizer), and
// the id lists of CLI.md.
#include "cli/model_option.h"
#include "runtime/runnable_model.h"
#include "store/model_store.h"

namespace dragoman::cli {

ModelEntry resolveModel(const CommandLine& cmd, const ModelStore& store);
// Sizes the engine's threads (once) and opens the model named by --model, ready to run.
std::shared_ptr<RunnableModel> openModelOption(const CommandLine& cmd);
// The adapter --adapter names, bound to `model`; null without the option.
std::shared_ptr<const LoraSet> devAdapterFor(const CommandLine& cmd, const RunnableModel& model);

// "1,2,3" -> ids; throws UsageError naming the option on anything else.
std::vector<std::int64_t> parseIds(const QString& text, const char* option);
std::string joinIds(const std::vector<std::int64_t>& ids);

}  // namespace dragoman::cli
