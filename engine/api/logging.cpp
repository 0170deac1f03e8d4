// dragoman.h's logging, torch-free so the document formats and the fuzz targets log without the engine.
#include "dragoman.h"

#include "util/log.h"

namespace dragoman {

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

}  // namespace dragoman
