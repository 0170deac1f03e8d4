#include "runtime/architectures.h"

#include "util/error.h"

namespace dragoman {

extern const Architecture kMarianArchitecture;
extern const Architecture kHunyuanDenseArchitecture;

const std::vector<const Architecture*>& architectures() {
    static const std::vector<const Architecture*> all{&kMarianArchitecture, &kHunyuanDenseArchitecture};
    return all;
}

const Architecture& architectureFor(const std::string& modelType, const std::string& label) {
    std::string supported;
    for (const auto* architecture : architectures()) {
        if (architecture->modelType == modelType) return *architecture;
        supported += (supported.empty() ? "" : ", ") + std::string(architecture->modelType);
    }
    throw Error("config", label + ": unsupported model_type '" + modelType + "' (supported: " + supported + ")");
}

std::unique_ptr<Tokenizer> loadTokenizer(const std::filesystem::path& dir, const std::string& modelType) {
    return architectureFor(modelType, (dir / "config.json").string()).tokenizer(dir);
}

}  // namespace dragoman
