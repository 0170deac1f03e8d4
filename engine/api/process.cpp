// dragoman.h's process-wide functions: threads, logging, text checks.
#include "dragoman.h"

#include "kernels/threads.h"
#include "text/utf8.h"
#include "util/log.h"
#include "util/paths.h"

namespace dragoman {

int initEngine(const EngineParams& params) {
    return configureThreads(params.threads);
}

void initLogging() {
    log::init();
}

void logMessage(LogLevel level, std::string_view text) {
    static constexpr spdlog::level::level_enum levels[] = {spdlog::level::debug, spdlog::level::info, spdlog::level::warn,
                                                           spdlog::level::err};
    log::logger().log(levels[static_cast<int>(level)], "{}", text);
}

void flushLog() {
    log::logger().flush();
}

bool isValidUtf8(std::string_view text) {
    return utf8::isValid(text);
}

}  // namespace dragoman
