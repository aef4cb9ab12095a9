// Standard Webhooks v1 verification: HMAC-SHA256 ("v1") with one or more secrets (rotation) and,
// optionally, Ed25519 ("v1a") with public keys.
// Source: Standard Webhooks v1 specification, section "Verifying webhooks"; docs/signing.md and
// docs/receiver.md, "Answers" (steps 2-4 and their order: headers, then signature, then time).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "webhooks/ed25519.h"
#include "webhooks/secret.h"
#include "webhooks/signer.h"
#include "webhooks/wire.h"

namespace webhooks {

enum class VerifyStatus {
  ok,
  missing_header,         // webhook-id, webhook-timestamp or webhook-signature is absent
  malformed_header,       // present but not of the documented shape (see `header`)
  no_matching_signature,  // no v1/v1a entry matches any configured secret or key
  timestamp_too_old,      // older than now - tolerance
  timestamp_too_new,      // newer than now + tolerance
};

// Stable name, e.g. "timestamp_too_old".
std::string_view to_string(VerifyStatus status) noexcept;

struct VerifyResult {
  VerifyStatus status = VerifyStatus::ok;
  std::string header;          // the header at fault for missing/malformed, else empty
  std::string message;         // a sentence for humans; never contains a secret
  std::int64_t timestamp = 0;  // the parsed webhook-timestamp (Unix seconds) once known
  explicit operator bool() const { return status == VerifyStatus::ok; }
};

// The names of the three signed headers in one family (wire.h).
struct SignedHeaderNames {
  std::string_view id, timestamp, signature;
};
inline constexpr SignedHeaderNames kWebhookHeaderNames{kHeaderId, kHeaderTimestamp,
                                                       kHeaderSignature};
inline constexpr SignedHeaderNames kSvixHeaderNames{kSvixHeaderId, kSvixHeaderTimestamp,
                                                    kSvixHeaderSignature};

// The three signed headers as received (values untrimmed, as the transport gave them), and the
// family they were read under (named in VerifyResult::header and ::message).
struct SignedHeaders {
  std::optional<std::string_view> id;
  std::optional<std::string_view> timestamp;
  std::optional<std::string_view> signature;
  SignedHeaderNames names = kWebhookHeaderNames;
};

// Which family a request's signed headers use, from `present(name)` (whether the request has a
// header of that name, compared case-insensitively): kSvixHeaderNames when it has any of svix-id,
// svix-timestamp, svix-signature and none of webhook-id, webhook-timestamp, webhook-signature;
// otherwise kWebhookHeaderNames. A request with some of each is refused, never read as a mix:
// returns malformed_header, VerifyResult::header the first webhook-* name present. Otherwise
// returns ok and sets `names`.
VerifyResult choose_signed_header_names(const std::function<bool(std::string_view)>& present,
                                        SignedHeaderNames& names);

struct VerifyOptions {
  // Largest accepted |now - webhook-timestamp|, both directions. Default 300 s.
  std::chrono::seconds tolerance{300};
  // false skips the timestamp window, for replaying old captures. The timestamp must still be
  // well-formed and is still signed.
  bool check_timestamp = true;
};

// Immutable after construction; `verify` is thread-safe.
class Verifier {
 public:
  // Throws Error(ErrorCode::invalid_argument) when no secret and no public key is given.
  explicit Verifier(const std::vector<Secret>& secrets,
                    std::vector<Ed25519PublicKey> public_keys = {}, VerifyOptions options = {});

  // Checks, in order: presence and shape of the three headers; that some "v1," entry matches a
  // secret (HMAC, constant-time) or some "v1a," entry verifies with a public key; then the time
  // window against `now_seconds` (Unix seconds). Entries of other versions are ignored; an entry
  // with an empty or undecodable signature matches nothing. The signature header is malformed
  // when it has no entry of the form "<version>,<signature>". Entries are separated by spaces or
  // tabs, and a comma ending an entry is also a separator: "a, b", "a\tb" and "a b" verify the
  // same, in any order of their entries.
  VerifyResult verify(const SignedHeaders& headers, std::string_view body,
                      std::int64_t now_seconds) const;

 private:
  // Whether an entry of the webhook-signature value `signature` is a v1 signature by one of the
  // secrets or a v1a signature by one of the public keys of id.timestamp.body.
  bool any_signature_matches(std::string_view id, std::int64_t timestamp, std::string_view body,
                             std::string_view signature) const;

  std::vector<Signer> signers_;
  std::vector<Ed25519PublicKey> public_keys_;
  VerifyOptions options_;
};

}  // namespace webhooks
