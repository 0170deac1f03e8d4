#pragma once
// --server URL [--api-key-file F] [--server-model NAME] on translate and translate-file: an OpenAI-compatible
// server computes the translations instead of a local model.
#include "cli/command_line.h"
#include "remote/remote_engine.h"

#include <memory>

namespace dragoman::cli {

void addServerOptions(CommandLine& cmd);
// The server named by the options (connected: its model list read), or null without --server. Throws
// UsageError for --server beside --model or --adapter, Error("remote") for a server that does not answer.
std::unique_ptr<RemoteEngine> remoteEngineOption(const CommandLine& cmd);

// What --from auto needs to know of the server's model: its languages (asked for once) and whether it prompts.
ModelDescription describeServerModel(const RemoteEngine& remote);

// Requests in flight at once against a server by default: enough for its continuous batching to fill.
constexpr int kRemoteConcurrency = 8;

}  // namespace dragoman::cli
