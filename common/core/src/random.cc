#include "webhooks/random.h"

#include <openssl/rand.h>

#include <climits>

#include "webhooks/error.h"

namespace webhooks {

void secure_random_bytes(std::span<std::uint8_t> out) {
  if (out.empty()) return;
  if (out.size() > static_cast<std::size_t>(INT_MAX) ||
      RAND_bytes(out.data(), static_cast<int>(out.size())) != 1) {
    throw Error(ErrorCode::crypto, "RAND_bytes failed");
  }
}

std::uint64_t SecureRandom::next_u64() {
  std::uint8_t bytes[8];
  secure_random_bytes(bytes);
  std::uint64_t value = 0;
  for (std::uint8_t b : bytes) value = (value << 8) | b;
  return value;
}

}  // namespace webhooks
