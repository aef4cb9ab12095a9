// Capture files of `webhooks listen --capture`, read back by `webhooks replay --capture`: one JSON
// object per line, {"headers":{"webhook-id":"...",...},"body":"..."}, each delivery the listener
// handled for the first time. Split out of listen.cc and admin.cc so that tests/fuzz can reach
// the reader and the writer (tests/fuzz/capture_line.cc).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace webhooks::cli {

// One delivery of a capture file.
struct Captured {
  std::string id, body;             // webhook-id and the raw body
  std::optional<std::string> type;  // webhook-event-type, when the line has it
};

// The line (without its "\n") that records a delivery: `headers` is an object of header names to
// string values, `body` the raw body. Bytes that are not valid UTF-8 are written as U+FFFD (a
// header value is whatever the client sent); never throws for any value.
std::string capture_line(const nlohmann::json& headers, const std::string& body);

// The deliveries of the capture-file text `text`, in order; lines are split at "\n" and empty
// ones skipped. Throws UsageError (cli.h) "FILE:LINE: what is wrong" for the first malformed line,
// `file` naming the file: not a JSON object, no "headers" object, no "webhook-id" string in it,
// no "body" string, or a "webhook-event-type" that is not a string.
std::vector<Captured> parse_capture(std::string_view text, const std::string& file);

}  // namespace webhooks::cli
