// How the CLI prints the admin API's answers: a table of rows, the members of one object, or the
// JSON itself (--json).
#pragma once

#include <httplib.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace webhooks::cli {

// `text` with its control characters written as escapes (\n, \r, \t, \xHH, and C1 as \u00HH),
// so that a value cannot break a line or send the terminal a command.
std::string printable(std::string_view text);

// A JSON value as one cell, printable(): a string as it is (empty: "-"), null as "-", an array of
// strings joined with ", " ("-" when empty), anything else as compact JSON.
std::string cell(const nlohmann::ordered_json& value);

// Prints the array under `key` of `doc` (or `doc` itself when it has no such member) as a table
// with the given columns, a header line first; or, when `as_json`, the whole document as JSON.
void print_list(const nlohmann::ordered_json& doc, const std::string& key,
                const std::vector<std::string>& columns, bool as_json);

// Prints the members of the object `doc` as aligned "name: cell" lines ("id" or "event_id" first,
// then the others in their order); or,
// when `as_json`, the object as JSON.
void print_object(const nlohmann::ordered_json& doc, bool as_json);

// Why a request got no answer, for a message after "no answer from URL: ": "cannot connect
// (connection refused or unreachable)", "no answer within 30 s", "the TLS handshake failed (…)", …
std::string no_answer(httplib::Error error, std::chrono::milliseconds read_timeout);

}  // namespace webhooks::cli
