// Structured logs: one JSON object per line, through the named spdlog logger "webhooks".
//
// Every library of the toolkit (webhooks::common, webhooks::publisher, webhooks::receiver) writes
// through logger() and nothing else: never through spdlog's default logger, never to stdout.
// An application that embeds a library routes or silences those lines with set_logger():
//
//   auto mine = std::make_shared<spdlog::logger>("webhooks", my_sink);
//   mine->set_level(spdlog::level::warn);
//   webhooks::set_logger(mine);      // or webhooks::set_logger(nullptr): no line at all
//
// Each line's message (spdlog's %v) is one JSON object: the fields the library passed plus "ts"
// (UTC, RFC 3339 with milliseconds) and "level" ("debug", "info", "warning", "error"), keys in
// sorted order. The executables call configure_json_logging(), which installs an asynchronous
// "webhooks" logger printing those messages as bare lines on stderr.
#pragma once

#include <spdlog/spdlog.h>

#include <cstddef>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace webhooks {

// The name of the libraries' logger (spdlog::get(kLoggerName) returns the default one).
inline constexpr const char* kLoggerName = "webhooks";

// Lines the asynchronous logger queues at most; a caller that finds the queue full waits for
// room (spdlog's `block` policy: a payments log does not drop lines). 408 bytes a slot (1.7 MB).
inline constexpr std::size_t kLogQueueLines = 4096;

// The logger the libraries write through now. Until set_logger() or configure_json_logging() is
// called it is the default, chosen when the first line is logged: the logger the application
// registered with spdlog under "webhooks" (spdlog::register_logger) if there is one, else one
// named "webhooks", synchronous, pattern "%v" (the bare JSON object), at spdlog's global level
// (info unless spdlog::set_level changed it: debug lines dropped), each line written to stderr
// (never stdout). Either way it is registered under "webhooks", so spdlog::get("webhooks") and
// spdlog::set_level() reach it as they reach any registered logger.
std::shared_ptr<spdlog::logger> logger();

// Replaces the libraries' logger: every later line goes to `replacement` (its sinks, pattern and
// level decide what is written where). nullptr silences the libraries (a logger without a sink,
// level off). In spdlog's registry the name "webhooks" then refers to `replacement` if it has that
// name; otherwise the name is dropped. Thread-safe; a replaced logger stays alive until the process
// exits, since another thread may still be writing through it, so call this at start-up (and in
// tests), not per request.
void set_logger(std::shared_ptr<spdlog::logger> replacement);

// Whether a line at `level` would be written: the logger's level test, without looking the logger
// up by name (the current one is kept in an atomic pointer). Callers check it before building a
// line's fields on a hot path.
bool log_enabled(spdlog::level::level_enum level);

// Makes the "webhooks" logger (set_logger) print bare lines to stderr, each one JSON object
// written by log_event, for the toolkit's executables. `level` is "debug", "info", "warn" or
// "error". Call once at start-up.
// Asynchronous: a logging call formats its line and queues it (at most kLogQueueLines, then it
// waits); one thread (blocking every signal) writes the queued lines to stderr in order, each
// flushed. At exit (return from main, std::exit) every queued line is written before the process
// ends, and later lines are written directly. A process killed (SIGKILL, a crash) loses the lines
// still queued (or batched: detail/log_batch.h).
void configure_json_logging(const std::string& level = "info");

// Logs `fields` plus "ts" (UTC, RFC 3339 with milliseconds) and "level" as one JSON line through
// logger(); nothing is built when the level is below the logger's. A field named "ts" or "level"
// in `fields` wins. Never logs secrets: callers pass only what is safe to print. Thread-safe.
void log_event(spdlog::level::level_enum level, nlohmann::json fields);

}  // namespace webhooks
