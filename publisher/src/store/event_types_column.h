// publisher_endpoints.event_types: an endpoint's filter stored as a JSON array of exact types and
// prefix patterns ("order.*"); [] selects every type (model.h, filter_matches).
#pragma once

#include <string>
#include <vector>

namespace webhooks::publisher::detail {

// The column's text for `types`: ["a","b.*"].
std::string types_json(const std::vector<std::string>& types);
// The filter read back from the column. Text that is not a JSON array gives an empty filter and
// entries that are not strings are skipped (neither is ever written). Throws nothing.
std::vector<std::string> parse_types(const std::string& text);

}  // namespace webhooks::publisher::detail
