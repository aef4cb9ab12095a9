#include "webhooks/verifier.h"

#include <openssl/crypto.h>

#include "webhooks/base64.h"
#include "webhooks/enum_names.h"
#include "webhooks/error.h"
#include "webhooks/wire.h"

namespace webhooks {
namespace {

struct Entry {
  std::string_view version;
  std::string_view signature;
};

// Calls `fn(entry)` for each "<version>,<signature>" token of the header. Tokens are separated
// by spaces or tabs; a comma that ends a token is a separator too, so a list joined with ", "
// reads like one joined with " " (base64 signatures never contain a comma). Tokens without a
// comma, or with an empty version, are not entries. Returns false when `fn` stops.
template <typename Fn>
bool for_each_entry(std::string_view header, Fn&& fn) {
  while (!header.empty()) {
    const std::size_t end = header.find_first_of(" \t");
    std::string_view token = header.substr(0, end);
    header = end == std::string_view::npos ? std::string_view{} : header.substr(end + 1);
    const std::size_t comma = token.find(',');
    if (comma == std::string_view::npos || comma == 0) continue;
    if (comma + 1 < token.size() && token.back() == ',') token.remove_suffix(1);
    if (!fn(Entry{token.substr(0, comma), token.substr(comma + 1)})) return false;
  }
  return true;
}

VerifyResult failure(VerifyStatus status, std::string_view header, std::string message) {
  return VerifyResult{status, std::string(header), std::move(message), 0};
}

}  // namespace

constexpr EnumNames<VerifyStatus, 6> kVerifyStatusNames{
    {"ok", "missing_header", "malformed_header", "no_matching_signature", "timestamp_too_old",
     "timestamp_too_new"},
    "unknown"};
std::string_view to_string(VerifyStatus status) noexcept { return kVerifyStatusNames.name(status); }

Verifier::Verifier(const std::vector<Secret>& secrets, std::vector<Ed25519PublicKey> public_keys,
                   VerifyOptions options)
    : public_keys_(std::move(public_keys)), options_(options) {
  if (secrets.empty() && public_keys_.empty()) {
    throw Error(ErrorCode::invalid_argument, "a verifier needs at least one secret or public key");
  }
  signers_.reserve(secrets.size());
  for (const Secret& secret : secrets) signers_.emplace_back(secret);
}

bool Verifier::any_signature_matches(std::string_view id, std::int64_t timestamp,
                                     std::string_view body, std::string_view signature) const {
  bool matched = false;
  for (const Signer& signer : signers_) {
    // Compared in the encoded form, like the reference libraries: the entry is attacker input,
    // the expected signature is secret, and CRYPTO_memcmp takes the same time for any mismatch.
    const std::string expected = signer.sign(id, timestamp, body);
    const std::string_view expected_b64 = std::string_view(expected).substr(3);
    for_each_entry(signature, [&](const Entry& entry) {
      if (entry.version == "v1" && entry.signature.size() == expected_b64.size()) {
        matched |=
            CRYPTO_memcmp(expected_b64.data(), entry.signature.data(), expected_b64.size()) == 0;
      }
      return true;
    });
  }
  if (!matched && !public_keys_.empty()) {
    const std::string content = signed_content(id, timestamp, body);
    for_each_entry(signature, [&](const Entry& entry) {
      std::uint8_t decoded[96];
      if (entry.version != "v1a" || entry.signature.size() != 88 ||
          base64_decode_to(entry.signature, decoded) != std::optional<std::size_t>(64)) {
        return true;
      }
      for (const auto& key : public_keys_) matched |= key.verify(content, {decoded, 64});
      return !matched;
    });
  }
  return matched;
}

VerifyResult Verifier::verify(const SignedHeaders& headers, std::string_view body,
                              std::int64_t now_seconds) const {
  const SignedHeaderNames& names = headers.names;
  const std::pair<std::string_view, const std::optional<std::string_view>*> required[] = {
      {names.id, &headers.id},
      {names.timestamp, &headers.timestamp},
      {names.signature, &headers.signature}};
  for (const auto& [name, value] : required) {
    if (!value->has_value()) {
      return failure(VerifyStatus::missing_header, name, std::string(name) + " header is missing");
    }
  }
  if (!is_valid_webhook_id(*headers.id)) {
    return failure(
        VerifyStatus::malformed_header, names.id,
        std::string(names.id) + " must be 1 to 255 printable ASCII characters without spaces");
  }
  const auto timestamp = parse_webhook_timestamp(*headers.timestamp);
  if (!timestamp) {
    return failure(VerifyStatus::malformed_header, names.timestamp,
                   std::string(names.timestamp) + " must be Unix seconds: 1 to 10 decimal digits");
  }
  const bool has_entry = !for_each_entry(*headers.signature, [](const Entry&) { return false; });
  if (!has_entry) {
    return failure(VerifyStatus::malformed_header, names.signature,
                   std::string(names.signature) + " has no '<version>,<signature>' entry");
  }

  if (!any_signature_matches(*headers.id, *timestamp, body, *headers.signature)) {
    return failure(VerifyStatus::no_matching_signature, names.signature,
                   "no signature matches any configured secret or key");
  }

  VerifyResult result{VerifyStatus::ok, {}, {}, *timestamp};
  if (options_.check_timestamp) {
    const std::int64_t tolerance = options_.tolerance.count();
    if (*timestamp < now_seconds - tolerance) {
      result.status = VerifyStatus::timestamp_too_old;
      result.message = std::string(names.timestamp) + " is " +
                       std::to_string(now_seconds - *timestamp) + " s old; the tolerance is " +
                       std::to_string(tolerance) + " s";
    } else if (*timestamp > now_seconds + tolerance) {
      result.status = VerifyStatus::timestamp_too_new;
      result.message = std::string(names.timestamp) + " is " +
                       std::to_string(*timestamp - now_seconds) +
                       " s in the future; the tolerance is " + std::to_string(tolerance) + " s";
    }
    if (!result) result.header = names.timestamp;
  }
  return result;
}

VerifyResult choose_signed_header_names(const std::function<bool(std::string_view)>& present,
                                        SignedHeaderNames& names) {
  const auto first_present = [&](const SignedHeaderNames& family) -> std::string_view {
    for (std::string_view name : {family.id, family.timestamp, family.signature}) {
      if (present(name)) return name;
    }
    return {};
  };
  const std::string_view webhook = first_present(kWebhookHeaderNames);
  const std::string_view svix = first_present(kSvixHeaderNames);
  if (!webhook.empty() && !svix.empty()) {
    return failure(VerifyStatus::malformed_header, webhook,
                   "the request carries both " + std::string(webhook) + " and " +
                       std::string(svix) + ": send the webhook-* or the svix-* headers, not both");
  }
  names = svix.empty() ? kWebhookHeaderNames : kSvixHeaderNames;
  return {};
}

}  // namespace webhooks
