#include "util/log.h"

#include "util/overrides.h"
#include "util/paths.h"

#include <spdlog/sinks/rotating_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>

#include <cstdlib>
#include <mutex>

namespace dragoman::log {
namespace {

std::shared_ptr<spdlog::logger>& instance() {
    static std::shared_ptr<spdlog::logger> logger;
    return logger;
}

std::once_flag& initFlag() {
    static std::once_flag flag;
    return flag;
}

void doInit(const InitOptions& options) {
    const auto& setting = environmentOverrides().logLevel;
    const bool explicitLevel = !setting.empty();
    const auto level = explicitLevel ? spdlog::level::from_str(setting) : spdlog::level::info;

    std::vector<spdlog::sink_ptr> sinks;
    if (options.toStderr) {
        auto sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
        sink->set_level(explicitLevel ? level : spdlog::level::warn);
        sinks.push_back(sink);
    }
    auto file = options.file.empty() ? paths::userDataDir() / "logs" / "dragoman.log" : options.file;
    std::string fileProblem;
    try {
        std::filesystem::create_directories(file.parent_path());
        auto sink = std::make_shared<spdlog::sinks::rotating_file_sink_mt>(file.string(), 5 * 1024 * 1024, 3);
        sink->set_level(level);
        sinks.push_back(sink);
    } catch (const std::exception& e) {
        fileProblem = e.what();  // a read-only home must not stop the app: log to stderr only
    }
    auto logger = std::make_shared<spdlog::logger>("dragoman", sinks.begin(), sinks.end());
    logger->set_level(level);
    logger->set_pattern("%Y-%m-%d %H:%M:%S.%e %^%l%$ [%t] %v");
    logger->flush_on(spdlog::level::warn);
    instance() = logger;
    if (!fileProblem.empty()) logger->warn("log file {} unavailable: {}", file.string(), fileProblem);
}

}  // namespace

void init(const InitOptions& options) {
    std::call_once(initFlag(), [&] { doInit(options); });
}

spdlog::logger& logger() {
    init();
    return *instance();
}

}  // namespace dragoman::log
