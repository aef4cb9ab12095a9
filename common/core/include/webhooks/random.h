// Random sources. Jitter takes a RandomSource so tests can seed it; ids and secrets always use
// OpenSSL's CSPRNG through `secure_random_bytes`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <random>
#include <span>

namespace webhooks {

// Fills `out` from OpenSSL's RAND_bytes. Throws webhooks::Error(ErrorCode::crypto) if OpenSSL
// fails.
void secure_random_bytes(std::span<std::uint8_t> out);

// A source of uniformly distributed 64-bit values, for jitter and sampling (not for secrets).
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  // A uniformly distributed value. Thread-safe.
  virtual std::uint64_t next_u64() = 0;
  // A uniformly distributed double in [0, 1).
  double next_unit() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }
};

// Seeded from OpenSSL's CSPRNG; the production source.
class SecureRandom final : public RandomSource {
 public:
  std::uint64_t next_u64() override;
};

// Deterministic for a given seed (std::mt19937_64); for tests. Thread-safe.
class SeededRandom final : public RandomSource {
 public:
  explicit SeededRandom(std::uint64_t seed) : engine_(seed) {}
  std::uint64_t next_u64() override {
    std::lock_guard lock(mutex_);
    return engine_();
  }

 private:
  std::mutex mutex_;
  std::mt19937_64 engine_;
};

}  // namespace webhooks
