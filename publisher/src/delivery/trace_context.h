// W3C Trace Context (https://www.w3.org/TR/trace-context/, "traceparent Header" and "tracestate
// Header") for events and their delivery attempts: an event keeps the traceparent it was given
// (POST /v1/events' header, Ingest's EventInput, an outbox row) or one the publisher starts; each
// attempt sends a child: the same trace id and flags, a new span id.
#pragma once

#include <string>
#include <string_view>

namespace webhooks::publisher {

// True when `traceparent` is a valid header value: "00-<32 hex>-<16 hex>-<2 hex>" in lowercase,
// the trace id and parent id not all zeros; a later version (not "ff") may carry more after a
// "-" (the spec's "Versioning of traceparent"). Throws nothing.
bool valid_traceparent(std::string_view traceparent) noexcept;

// True when `tracestate` can be passed on: at most 512 bytes of printable ASCII (0x20..0x7E), as
// the spec's list-members are (its grammar is not checked further: it is passed on as given).
bool valid_tracestate(std::string_view tracestate) noexcept;

// A new trace: "00-<random trace id>-<random span id>-01" (sampled), from OpenSSL's CSPRNG.
std::string new_traceparent();

// The traceparent one attempt sends under `parent` (valid): version 00, the parent's trace id and
// flags, a new random span id.
std::string child_traceparent(std::string_view parent);

// The 32 hex digits of the trace id of a valid traceparent; empty for an invalid one.
std::string_view trace_id_of(std::string_view traceparent) noexcept;

}  // namespace webhooks::publisher
