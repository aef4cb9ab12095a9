// How the CLI prints the admin API's answers: a table of rows, the members of one object, or the
// JSON itself (--json).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace webhooks::cli {

// A JSON value as one cell: a string as it is, null as "-", an array of strings joined with ", "
// ("-" when empty), anything else as compact JSON.
std::string cell(const nlohmann::ordered_json& value);

// Prints the array under `key` of `doc` (or `doc` itself when it has no such member) as a table
// with the given columns, a header line first; or, when `as_json`, the whole document as JSON.
void print_list(const nlohmann::ordered_json& doc, const std::string& key,
                const std::vector<std::string>& columns, bool as_json);

// Prints the members of the object `doc` as aligned "name: cell" lines ("id" or "event_id" first,
// then the others in their order); or,
// when `as_json`, the object as JSON.
void print_object(const nlohmann::ordered_json& doc, bool as_json);

}  // namespace webhooks::cli
