#include "util/overrides.h"

#include <algorithm>
#include <cstdlib>

namespace dragoman {
namespace {

std::string text(const char* name) {
    const char* value = std::getenv(name);
    return value ? std::string(value) : std::string();
}

int number(const char* name, int fallback) {
    const auto value = text(name);
    return value.empty() ? fallback : std::atoi(value.c_str());
}

}  // namespace

const EnvironmentOverrides& environmentOverrides() {
    static const EnvironmentOverrides overrides = [] {
        EnvironmentOverrides o;
        o.threads = std::max(0, number("DRAGOMAN_THREADS", 0));
        o.atenThreads = std::max(1, number("DRAGOMAN_ATEN_THREADS", 1));
        o.device = text("DRAGOMAN_DEVICE");
        o.onednn = text("DRAGOMAN_ONEDNN");
        o.noAvx512 = text("DRAGOMAN_NO_AVX512") == "1";
        o.bf16Activations = text("DRAGOMAN_BF16_ACTIVATIONS") != "0";
        o.logLevel = text("DRAGOMAN_LOG");
        o.sentencepieceShim = text("DRAGOMAN_SPM_SHIM");
        o.bundledModels = text("DRAGOMAN_BUNDLED_MODELS");
        return o;
    }();
    return overrides;
}

}  // namespace dragoman
