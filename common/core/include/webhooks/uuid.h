// UUIDv7 (RFC 9562, section 5.7) for event_id and delivery_id.
// Monotonic within a generator: a 42-bit counter in rand_a and the top of rand_b (RFC 9562,
// section 6.2, method 1 "fixed bit-length dedicated counter"), seeded randomly each millisecond
// with its top bit clear; when it overflows, or the clock steps back, the timestamp field is
// carried forward so that ids never go backwards. Random bits come from OpenSSL's CSPRNG.
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "webhooks/clock.h"

namespace webhooks {

using UuidBytes = std::array<std::uint8_t, 16>;

// Lowercase 8-4-4-4-12 form, e.g. "01890a5d-ac96-774b-bcce-b302099a8057".
std::string uuid_to_string(const UuidBytes& bytes);

// The bytes of the lowercase 8-4-4-4-12 form that uuid_to_string writes (any version), so that
// uuid_to_string(*uuid_from_string(t)) == t; std::nullopt for anything else (uppercase included).
std::optional<UuidBytes> uuid_from_string(std::string_view text) noexcept;

// True when `text` is the lowercase or uppercase 8-4-4-4-12 form with version 7 and variant 10.
bool is_uuid_v7(std::string_view text) noexcept;

// Thread-safe. Each id's 48-bit time field is the clock's Unix milliseconds (or the last one
// used, when the clock went back). Throws Error(crypto) if OpenSSL's RNG fails.
class UuidV7Generator {
 public:
  explicit UuidV7Generator(const Clock& clock) : clock_(clock) {}
  UuidBytes next_bytes();
  std::string next() { return uuid_to_string(next_bytes()); }

 private:
  const Clock& clock_;
  std::mutex mutex_;
  std::int64_t last_ms_ = -1;
  std::uint64_t counter_ = 0;  // 42 bits
};

}  // namespace webhooks
