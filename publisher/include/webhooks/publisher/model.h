// The publisher's data model (docs/operations.md): endpoints with their signing secrets and
// event-type filter, events, one delivery task per event and matching endpoint, and one delivery
// attempt per HTTP try. Plain values; times are Unix milliseconds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/clock.h"

namespace webhooks::publisher {

// Why a delivery attempt got no HTTP status: reported by the HTTP client
// (delivery/http_delivery.h), carried by the dispatcher, and kept in the attempt's record
// (DeliveryAttempt below) as its code and message.
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

// How an endpoint's deliveries are signed (Standard Webhooks v1): "v1" HMAC-SHA256 with a
// "whsec_" secret (the default), "v1a" Ed25519 with a "whsk_" signing key (receivers hold its
// "whpk_" public key), "both" one entry of each in webhook-signature.
enum class SigningScheme { v1, v1a, both };
std::string_view to_string(SigningScheme scheme) noexcept;
// "v1", "v1a" or "both"; std::nullopt for anything else.
std::optional<SigningScheme> parse_signing_scheme(std::string_view text) noexcept;
inline bool uses_v1(SigningScheme s) { return s != SigningScheme::v1a; }
inline bool uses_v1a(SigningScheme s) { return s != SigningScheme::v1; }

// A signing key, a secret ("whsec_…", v1) or an Ed25519 signing key ("whsk_…", v1a), and when it
// stops signing (std::nullopt: never). After a rotation the old keys keep signing until their
// expiry, so receivers can switch over.
struct EndpointSecret {
  std::string secret;
  UnixMillis created_at = 0;
  std::optional<UnixMillis> expires_at;
  bool active_at(UnixMillis now) const { return !expires_at || *expires_at > now; }
  // True for an Ed25519 signing key ("whsk_…").
  bool is_v1a() const { return secret.starts_with("whsk_"); }
};

// How an endpoint's deliveries are ordered: "none" (the default: in parallel, retries in any
// order) or "fifo" (the events of one ordering key one at a time, in acceptance order: the next
// is sent once the one ahead succeeded or is dead; docs/publisher-delivery.md, "Ordering").
enum class Ordering { none, fifo };
std::string_view to_string(Ordering ordering) noexcept;
// "none" or "fifo"; std::nullopt for anything else.
std::optional<Ordering> parse_ordering(std::string_view text) noexcept;

// A credential sent with each delivery besides the signature (an HTTP Authorization header):
// none, "bearer" (Authorization: Bearer <token>) or "basic" (RFC 7617, username:password).
// Stored like a secret: the admin API shows only its type.
struct EndpointAuth {
  enum class Type { none, bearer, basic } type = Type::none;
  std::string token;               // bearer
  std::string username, password;  // basic
  bool operator==(const EndpointAuth&) const = default;
};
std::string_view to_string(EndpointAuth::Type type) noexcept;
// The Authorization header value for `auth` ("Bearer …", "Basic <base64>"); empty for none.
std::string authorization_value(const EndpointAuth& auth);

// How deliveries to an endpoint are sent, besides where and how they are signed: per endpoint on
// POST /v1/endpoints and PATCH /v1/endpoints/{id} (docs/operations.md, "Admin API").
struct DeliveryControl {
  // Deliveries per second at most (>= 1), across every worker and daemon on the database; a
  // task held back is not an attempt. std::nullopt: unlimited.
  std::optional<int> rate_limit;
  Ordering ordering = Ordering::none;
  // Static headers added to each delivery, in order (check_static_header(): never webhook-*,
  // Host, Authorization, User-Agent, Expect, traceparent, tracestate, Content-*, Proxy-* or a
  // hop-by-hop header).
  std::vector<std::pair<std::string, std::string>> headers;
  EndpointAuth auth;
  // Mutual TLS on https:// URLs: the client certificate (chain) and its private key, PEM; both
  // empty for none. The key is never shown again.
  std::string client_certificate, client_key;
};

// Empty when `name: value` may be a static header of an endpoint; else why not: the name must be
// a token (RFC 9110 5.1) the publisher does not set (Host, Authorization, User-Agent, Expect,
// traceparent, tracestate, webhook-*), nor one describing the body or the connection (Content-*,
// Proxy-*, hop-by-hop: RFC 9110 7.6.1); the value non-empty, without control characters but HTAB
// and without whitespace at either end (HTTP would strip it).
std::string check_static_header(std::string_view name, std::string_view value);

struct Endpoint {
  std::string id;
  std::string merchant_id;
  std::string url;
  // Exact types ("order.captured") and prefix patterns ("order.*"); empty means every type.
  std::vector<std::string> event_types;
  std::string description;
  bool enabled = true;
  std::string disabled_reason;  // why it was disabled ("410 Gone", "disabled by an operator", …)
  std::optional<UnixMillis> failing_since;  // first failure of the current run of failures
  std::vector<EndpointSecret> secrets;      // newest first
  // What a rotation generates (schema 0005_endpoint_signing.sql); the keys themselves say how
  // each signs, so keys of the scheme before a rotation sign through their grace period.
  SigningScheme signing = SigningScheme::v1;
  DeliveryControl control;
  UnixMillis created_at = 0, updated_at = 0;
};

// True when `filter` selects `event_type`: an empty filter selects everything; an entry ending in
// ".*" selects every type that starts with the part before "*" ("order.*" selects
// "order.captured", not "order"); "*" alone selects everything; other entries match exactly.
bool filter_matches(const std::vector<std::string>& filter, std::string_view event_type);

struct Event {
  std::string event_id;  // UUIDv7
  std::string merchant_id;
  std::string type;
  std::string payload;  // the `data` object as JSON text
  UnixMillis created_at = 0;
  // The Idempotency-Key it was ingested with over HTTP (unquoted); empty when published
  // in-process (Ingest::publish) or ingested before keys were kept.
  std::string idempotency_key;
  // Orders the event among its merchant's events on FIFO endpoints (Ordering); empty: none (a
  // FIFO endpoint then orders it with every other keyless event).
  std::string ordering_key;
  // W3C Trace Context (trace_context.h): the traceparent given at ingest, or one the publisher
  // started for the event; each attempt carries its trace id with a span id of its own. Empty
  // only for events stored before trace context was kept. tracestate is passed on as given.
  std::string traceparent;
  std::string tracestate;
};

enum class TaskState { pending, delivering, succeeded, dead };
enum class Trigger { scheduled, manual };

std::string_view to_string(TaskState state) noexcept;
std::string_view to_string(Trigger trigger) noexcept;
// std::nullopt for unknown text.
std::optional<TaskState> parse_task_state(std::string_view text) noexcept;
std::optional<Trigger> parse_trigger(std::string_view text) noexcept;

struct Task {
  std::int64_t id = 0;
  std::string event_id;
  std::string endpoint_id;
  TaskState state = TaskState::pending;
  int attempts = 0;  // attempts of the current round (replay and recovery start a new round)
  UnixMillis next_attempt_at = 0;
  Trigger next_trigger = Trigger::scheduled;
  UnixMillis age_from = 0;  // the age limit counts from here (creation, replay or recovery)
  int last_status = 0;
  std::string last_error;
  UnixMillis created_at = 0, updated_at = 0;
  // The endpoint is disabled: the task waits (pending, or delivering until its attempt is
  // recorded) outside the due index, and is never claimed until the endpoint is enabled again.
  bool parked = false;
  // On a FIFO endpoint: waiting behind an unfinished task of its sequence (outside the due index
  // until the one ahead succeeded or is dead).
  bool waiting = false;
  // The task is in a FIFO sequence (its endpoint was FIFO when it was made): once dead, the
  // sequence went on without it.
  bool in_sequence = false;
};

// One HTTP try, as recorded (a row of publisher_attempts): the request's identity and the
// DeliveryResult it came to (http_delivery.h). status is 0 when no response arrived, and `error`
// says why (network error, timeout, refused address, ...). The error is stored as one text
// column, error_text(error, error_message) ("timeout: ..."), and read back typed.
struct DeliveryAttempt {
  std::string delivery_id;  // UUIDv7, new for every attempt
  std::int64_t task_id = 0;
  std::string event_id;
  std::string endpoint_id;
  int attempt_number = 0;  // 1-based within the task's round
  Trigger trigger = Trigger::scheduled;
  UnixMillis started_at = 0;
  int status = 0;
  std::int64_t latency_ms = 0;
  TransportError error = TransportError::none;  // none when a response arrived
  std::string error_message;                    // empty when a response arrived
  std::string response_snippet;  // the start of the response body; bytes not UTF-8 and NUL
                                 // bytes as U+FFFD
  std::string traceparent;       // the traceparent the attempt carried (empty before it was kept)
};

}  // namespace webhooks::publisher
