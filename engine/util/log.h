#pragma once
// Logging through spdlog: to stderr and to a rotating file in the user's data folder.
// The level comes from DRAGOMAN_LOG (trace, debug, info, warn, error, critical, off). Without it, the file
// gets info and stderr gets warnings only, so command-line output stays clean.
// Every line about a load or a translation goes through the Ctx overloads, which prefix the model id and
// the request id.
#include <spdlog/spdlog.h>

#include <cstdint>
#include <filesystem>
#include <string_view>

namespace dragoman::log {

struct InitOptions {
    std::filesystem::path file;  // empty: userDataDir()/logs/dragoman.log
    bool toStderr = true;
};

// Idempotent; safe to call from any thread before logging. Failing to open the file is not fatal.
void init(const InitOptions& options = {});

spdlog::logger& logger();

// Identifies what a line is about.
struct Ctx {
    std::string_view model;
    std::uint64_t request = 0;
};

template <typename... Args>
void write(spdlog::level::level_enum level, Ctx ctx, fmt::format_string<Args...> format, Args&&... args) {
    auto& log = logger();
    if (!log.should_log(level)) return;
    log.log(level, "[model={} req={}] {}", ctx.model.empty() ? std::string_view("-") : ctx.model, ctx.request,
            fmt::format(format, std::forward<Args>(args)...));
}

template <typename... Args>
void info(Ctx ctx, fmt::format_string<Args...> format, Args&&... args) {
    write(spdlog::level::info, ctx, format, std::forward<Args>(args)...);
}
template <typename... Args>
void warn(Ctx ctx, fmt::format_string<Args...> format, Args&&... args) {
    write(spdlog::level::warn, ctx, format, std::forward<Args>(args)...);
}
template <typename... Args>
void debug(Ctx ctx, fmt::format_string<Args...> format, Args&&... args) {
    write(spdlog::level::debug, ctx, format, std::forward<Args>(args)...);
}
template <typename... Args>
void error(Ctx ctx, fmt::format_string<Args...> format, Args&&... args) {
    write(spdlog::level::err, ctx, format, std::forward<Args>(args)...);
}

}  // namespace dragoman::log
