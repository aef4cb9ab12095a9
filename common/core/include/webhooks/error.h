// Failures of configuration and infrastructure. Expected outcomes (a bad signature, a replayed
// idempotency key) are returned as values, never thrown; see STYLE: "never both for the same case".
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace webhooks {

enum class ErrorCode {
  invalid_secret,    // a signing secret or key that fails to decode or has the wrong length
  invalid_key,       // an Ed25519 key (whsk_/whpk_) that fails to decode or has the wrong length
  invalid_json,      // a document that is not JSON, has duplicate names or invalid UTF-8
  invalid_argument,  // any other argument outside its documented domain
  crypto,            // OpenSSL failed (allocation, unavailable algorithm)
  storage,           // the database failed or is unreachable
  conflict,          // a write lost to a concurrent writer (e.g. the lease moved on)
  io,                // a file or socket operation failed
};

// Stable name of a code, e.g. "invalid_secret".
std::string_view to_string(ErrorCode code) noexcept;

// The one exception type the toolkit throws. `code()` is stable; `what()` is for humans.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const noexcept { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace webhooks
