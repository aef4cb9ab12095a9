// The HTTP answers of the idempotency core, written once for every server here (the guard of
// orders-api, the publisher's ingest, the webhook receiver): what a BeginResult that needs no
// operation is answered, what a lost lease is answered, what a failed database is answered, and
// what any other failure is answered. docs/idempotency.md and docs/receiver.md list them in their
// answer tables. Values only: writing them into a cpp-httplib response is
// webhooks/idempotency/http.h (webhooks::idempotency_http).
#pragma once

#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include "webhooks/clock.h"
#include "webhooks/idempotency/store.h"

namespace webhooks::idempotency {

// The words of the 409 and 422 answers: a request API says "Idempotency-Key", the receiver says
// "event" and "event id" (its dedup key: webhook-id, svix-id or a provider's id header). Status
// codes and headers are the same for both.
struct Vocabulary {
  std::string_view in_use_code;     // 409 error.code
  std::string_view in_use_message;  // 409 error.message while the holder runs
  std::string_view reused_code;     // 422 error.code
  std::string_view reused_message;  // 422 error.message
};

inline constexpr Vocabulary kRequestVocabulary{
    "idempotency_key_in_use", "a request with this Idempotency-Key is still in progress",
    "idempotency_key_reused", "this Idempotency-Key was used with a different request"};
inline constexpr Vocabulary kEventVocabulary{
    "event_in_progress", "this event is being handled right now; retry later", "event_id_reused",
    "this event id was already received with a different body"};

// A Response with error_body(code, message) and no headers.
Response error_response(int status, std::string_view code, std::string_view message);

// The answer of a begin outcome that runs no operation, or std::nullopt for `acquired` and
// `reacquired` (run it):
//   replay       the stored status, headers and body, plus `Idempotent-Replayed: true`
//   in_progress  409 words.in_use_code, `Retry-After` = whole seconds until the holder's lease
//                lapses (begun.lease_expires_at - now, rounded up, at least 1)
//   mismatch     422 words.reused_code
// `now` is Unix milliseconds.
std::optional<Response> answer_for(const BeginResult& begun, UnixMillis now,
                                   const Vocabulary& words = kRequestVocabulary);

// 409 words.in_use_code with `Retry-After: 1`: the operation ran but its lease was taken over
// (it ran longer than the lease without a heartbeat) or, in this process, another caller holds
// the key right now. Nothing of this attempt was stored; the holder's answer will be.
Response in_use(
    const Vocabulary& words = kRequestVocabulary,
    std::string_view message = "the idempotency lease was lost while the operation ran");

// 503 storage_unavailable with `Retry-After: 1`: the database failed or is unreachable, so a
// retry soon is the right move; nothing this request asked for was committed.
Response storage_unavailable(
    std::string_view message = "the database is unavailable; retry with the same request");

// The one mapping from a failed request's exception to its answer, for every server here:
// Error(storage) (the database failed or is unreachable: a retry soon is the right move) is
// storage_unavailable(), 503 with Retry-After: 1; anything else is 500 internal_error "the
// request failed; see the server's log" (the message never carries the exception's text, which
// may name a host or a table). `code` is the answer's error code, `what` the exception's message
// for the log ("unknown error" for an exception not derived from std::exception).
struct ExceptionAnswer {
  Response response;
  std::string_view code;  // "storage_unavailable" or "internal_error"
  std::string what;
};
ExceptionAnswer exception_answer(std::exception_ptr error);

}  // namespace webhooks::idempotency
