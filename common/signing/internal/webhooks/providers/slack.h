// Slack request signatures (Events API).
// Source: Slack's docs, "Verifying requests from Slack"
// (https://api.slack.com/authentication/verifying-requests-from-slack).
//
//   X-Slack-Request-Timestamp: <Unix seconds>
//   X-Slack-Signature:         v0=<hex HMAC-SHA256(signing secret, "v0:<timestamp>:<raw body>")>
//
// Tolerance: 300 s (Slack's docs: "more than five minutes from local time"), both directions.
// Dedup id: the body's top-level "event_id" (Ev...), which Slack keeps on its retries. So only
// Events API callbacks (JSON with event_id) are accepted; a slash command or a url_verification
// challenge verifies its signature but is answered missing_id.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "webhooks/providers/provider.h"

namespace webhooks::providers::slack {

inline constexpr std::string_view kHeaderSignature = "X-Slack-Signature";
inline constexpr std::string_view kHeaderTimestamp = "X-Slack-Request-Timestamp";

// The header value "v0=<64 hex digits>" for `body` sent at `timestamp`, signed with `secret`.
std::string sign(std::string_view secret, std::int64_t timestamp, std::string_view body);

// Statuses: missing_header (signature or timestamp header absent); malformed_header (signature
// without "v0=", timestamp not 1 to 10 digits); bad_signature; timestamp_too_old / too_new;
// missing_id (no string "event_id" in a JSON object body).
using Verifier = VerifierOf<Provider::slack>;

}  // namespace webhooks::providers::slack
