// Why a delivery attempt got no HTTP status: reported by the HTTP client (http_delivery.h),
// carried by the dispatcher, and kept in the attempt's record (model.h, DeliveryAttempt) as its
// code and message.
#pragma once

#include <string>
#include <string_view>

namespace webhooks::publisher {

enum class TransportError {
  none,             // an HTTP response arrived; see status
  timeout,          // connect_timeout or total_timeout passed
  connect,          // could not resolve the host or connect (refused, unreachable)
  address_refused,  // the SSRF check refused every address curl tried (ssrf_guard.h)
  tls,              // TLS handshake or certificate verification failed
  invalid_request,  // never sent: a URL curl cannot use or whose scheme is not http(s), or a
                    // header with CR/LF or an empty name
  other,            // anything else: connection reset, empty reply, malformed response, ...
};

// Stable name, e.g. "address_refused".
std::string_view to_string(TransportError error) noexcept;

// The text an attempt's error is stored and shown as (the `error` column of publisher_attempts,
// "error" in GET /v1/events/{id}/attempts): "<code>: <message>", e.g. "timeout: Operation timed
// out after 1000 milliseconds"; just `message` for `none` (normally empty).
std::string error_text(TransportError error, std::string_view message);

// The inverse of error_text: `text` starting with a code other than "none" and ": " gives that
// code and the rest; "" gives none; any other text (a row written before the code was kept)
// gives `other` with the whole text. Sets `message`; returns the code.
TransportError parse_error_text(std::string_view text, std::string& message);

}  // namespace webhooks::publisher
