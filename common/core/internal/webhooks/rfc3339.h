// RFC 3339 timestamps in UTC, as the event envelope's `timestamp` and the admin API use them.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "webhooks/clock.h"

namespace webhooks {

// "2026-11-30T21:05:30.123Z" (always UTC, always milliseconds).
std::string format_rfc3339(UnixMillis ms);

// Parses "YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)" (a 't' or space for 'T' and 'z' for 'Z' are
// accepted, per RFC 3339 section 5.6). Fractions beyond milliseconds are truncated. Returns Unix
// milliseconds, or std::nullopt when the text is not such a timestamp or names an invalid date.
std::optional<UnixMillis> parse_rfc3339(std::string_view text);

}  // namespace webhooks
