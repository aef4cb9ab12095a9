// The three Standard Webhooks headers and signature lists (webhooks/verifier.h, wire.h, secret.h).
// Input: "ID\nTIMESTAMP\nSIGNATURE\nSECRET\nBODY..." (a missing part is absent / empty).
// Properties: Verifier::verify never throws and says ok only for a signature made with the
// configured secret or key; an entry made by Signer (or Ed25519SigningKey) verifies wherever it
// stands in the list, joined with " ", ", " or a tab, next to whatever else the list holds;
// is_valid_webhook_id accepts exactly 1 to 255 printable ASCII characters without spaces;
// parse_webhook_timestamp accepts exactly 1 to 10 digits; Secret::parse throws only
// webhooks::Error(invalid_secret).
#include <string>

#include "fuzz_check.h"
#include "webhooks/ed25519.h"
#include "webhooks/error.h"
#include "webhooks/secret.h"
#include "webhooks/signer.h"
#include "webhooks/verifier.h"
#include "webhooks/wire.h"

namespace {

using namespace webhooks;

const Secret& secret() {
  static const Secret s = Secret::parse("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw");
  return s;
}
const Ed25519SigningKey& key() {
  static const Ed25519SigningKey k =
      Ed25519SigningKey::parse("whsk_nWGxne/9WmC6hEr0kuwsxERJxWl7MmkZcDusAxyuf2A=");
  return k;
}
const Verifier& verifier() {
  static const Verifier v({secret()}, {key().public_key()},
                          VerifyOptions{std::chrono::seconds(300), false});
  return v;
}

bool printable_id(std::string_view id) {
  if (id.empty() || id.size() > 255) return false;
  for (const char c : id) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

bool digits_only(std::string_view text) {
  if (text.empty() || text.size() > 10) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view rest = fuzz::text(data, size);
  const std::string_view id = fuzz::take(rest);
  const std::string_view timestamp = fuzz::take(rest);
  const std::string_view signature = fuzz::take(rest);
  const std::string_view secret_text = fuzz::take(rest);
  const std::string_view body = rest;

  FUZZ_CHECK(is_valid_webhook_id(id) == printable_id(id));
  const auto ts = parse_webhook_timestamp(timestamp);
  FUZZ_CHECK(ts.has_value() == digits_only(timestamp));
  if (ts) {
    std::int64_t value = 0;
    for (const char c : timestamp) value = value * 10 + (c - '0');
    FUZZ_CHECK(*ts == value);
  }

  try {
    Secret::parse(secret_text);
  } catch (const Error& e) {
    FUZZ_CHECK(e.code() == ErrorCode::invalid_secret);
  }

  const VerifyResult as_given = verifier().verify({id, timestamp, signature}, body, 0);
  FUZZ_CHECK(to_string(as_given.status) != "unknown");
  const VerifyResult no_signature = verifier().verify({id, timestamp, std::nullopt}, body, 0);
  FUZZ_CHECK(no_signature.status == VerifyStatus::missing_header);

  if (!is_valid_webhook_id(id) || !ts) {
    FUZZ_CHECK(as_given.status == VerifyStatus::malformed_header);
    return 0;
  }
  const std::string good = Signer(secret()).sign(id, *ts, body);
  const std::string good_v1a = key().sign(id, *ts, body);
  for (const std::string& entry : {good, good_v1a}) {
    for (const std::string_view separator : {" ", ", ", "\t"}) {
      const std::string before = entry + std::string(separator) + std::string(signature);
      const std::string after = std::string(signature) + std::string(separator) + entry;
      FUZZ_CHECK(verifier().verify({id, timestamp, before}, body, 0).status == VerifyStatus::ok);
      FUZZ_CHECK(verifier().verify({id, timestamp, after}, body, 0).status == VerifyStatus::ok);
    }
  }
  // The list as given verifies only when it holds a correct entry: a v1 entry equal to `good`'s
  // signature, or a v1a entry that Ed25519 accepts (which is `good_v1a` for a deterministic key).
  if (as_given) {
    const std::string_view v1 = std::string_view(good).substr(3);
    const std::string_view v1a = std::string_view(good_v1a).substr(4);
    FUZZ_CHECK(signature.find(v1) != std::string_view::npos ||
               signature.find(v1a) != std::string_view::npos);
  }
  return 0;
}
