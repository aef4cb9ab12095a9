// Structured logs: one JSON object per line on stderr, through spdlog.
#pragma once

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

namespace webhooks {

// Makes spdlog's default logger print bare lines to stderr (each line one JSON object written by
// log_event). `level` is "debug", "info", "warn" or "error". Call once at start-up.
void configure_json_logging(const std::string& level = "info");

// Logs `fields` plus "ts" (UTC, RFC 3339 with milliseconds) and "level" as one JSON line.
// Never logs secrets: callers pass only what is safe to print. Thread-safe.
void log_event(spdlog::level::level_enum level, nlohmann::json fields);

}  // namespace webhooks
