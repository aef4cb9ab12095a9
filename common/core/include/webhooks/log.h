// Structured logs: one JSON object per line on stderr, through spdlog.
#pragma once

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include <cstddef>
#include <string>

namespace webhooks {

// Lines the asynchronous logger queues at most; a caller that finds the queue full waits for
// room (spdlog's `block` policy: a payments log does not drop lines). 408 bytes a slot (1.7 MB).
inline constexpr std::size_t kLogQueueLines = 4096;

// Makes spdlog's default logger print bare lines to stderr (each line one JSON object written by
// log_event). `level` is "debug", "info", "warn" or "error". Call once at start-up.
// Asynchronous: a logging call formats its line and queues it (at most kLogQueueLines, then it
// waits); one thread (blocking every signal) writes the queued lines to stderr in order, each
// flushed. At exit (return
// from main, std::exit) every queued line is written before the process ends, and later lines
// are written directly. A process killed (SIGKILL, a crash) loses the lines still queued.
void configure_json_logging(const std::string& level = "info");

// Logs `fields` plus "ts" (UTC, RFC 3339 with milliseconds) and "level" as one JSON line.
// Never logs secrets: callers pass only what is safe to print. Thread-safe.
void log_event(spdlog::level::level_enum level, nlohmann::json fields);

}  // namespace webhooks
