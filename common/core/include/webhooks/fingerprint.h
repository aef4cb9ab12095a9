// Request fingerprints for the idempotency core (docs/idempotency.md, docs/signing.md).
#pragma once

#include <string>
#include <string_view>

namespace webhooks {

// Lowercase hex SHA-256 of `data` (64 characters).
std::string sha256_hex(std::string_view data);

// Lowercase hex SHA-256 of METHOD "\n" path "\n" canonical-body, where canonical-body is
// canonicalize_json(body), or empty when `body` is empty. So bodies that differ only in key order,
// whitespace or number spelling (1000 vs 1000.0) give one fingerprint, and numbers that differ in
// digits a double cannot carry (36893488147419103233 vs 36893488147419103234) give two.
// Throws webhooks::Error(ErrorCode::invalid_json) when a non-empty body is not valid JSON.
std::string request_fingerprint(std::string_view method, std::string_view path,
                                std::string_view body);

// The same fingerprint from a body its caller has already canonicalized (canonicalize_json, or a
// JsonBody read with its canonical form): `canonical_body` is hashed as it is. Throws nothing but
// std::bad_alloc.
std::string canonical_request_fingerprint(std::string_view method, std::string_view path,
                                          std::string_view canonical_body);

}  // namespace webhooks
