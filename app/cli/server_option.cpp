#include "cli/server_option.h"

namespace dragoman::cli {

void addServerOptions(CommandLine& cmd) {
    cmd.addOption({QStringLiteral("server"),
                   QStringLiteral("Translate on an OpenAI-compatible server (dragoman-cli serve, vLLM, SGLang) instead of a local model"),
                   QStringLiteral("URL")});
    cmd.addOption(
        {QStringLiteral("api-key-file"), QStringLiteral("The server's API key: the first line of this file"), QStringLiteral("F")});
    cmd.addOption({QStringLiteral("server-model"), QStringLiteral("The server's model or adapter (default: its first model)"),
                   QStringLiteral("NAME")});
}

std::unique_ptr<RemoteEngine> remoteEngineOption(const CommandLine& cmd) {
    if (!cmd.isSet("server")) {
        if (cmd.isSet("api-key-file") || cmd.isSet("server-model")) throw UsageError("--api-key-file and --server-model need --server");
        return nullptr;
    }
    if (cmd.isSet("model") || cmd.isSet("adapter"))
        throw UsageError("--server computes on the server's model: name it with --server-model, not --model or --adapter");
    return std::make_unique<RemoteEngine>(remoteSettings(cmd.value("server"), cmd.value("api-key-file"), cmd.value("server-model")));
}

ModelDescription describeServerModel(const RemoteEngine& remote) {
    ModelDescription description;
    description.id = remote.model().toStdString();
    description.prompts = remote.chat();
    description.targetLanguages = remote.targetLanguages();
    description.anySource = true;  // its sources are the server's to judge
    return description;
}

}  // namespace dragoman::cli
