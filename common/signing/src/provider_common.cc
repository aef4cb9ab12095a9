#include "provider_common.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "webhooks/enum_names.h"
#include "webhooks/error.h"
#include "webhooks/json_parse.h"
#include "webhooks/wire.h"

namespace webhooks::providers {
namespace detail {

std::array<std::uint8_t, 32> hmac_sha256(std::string_view key,
                                         std::initializer_list<std::string_view> parts) {
  std::string message;
  for (std::string_view part : parts) message.append(part);
  std::array<std::uint8_t, 32> out{};
  unsigned int written = 0;
  if (HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
           reinterpret_cast<const unsigned char*>(message.data()), message.size(), out.data(),
           &written) == nullptr ||
      written != out.size()) {
    throw Error(ErrorCode::crypto, "HMAC-SHA256 failed");
  }
  return out;
}

std::string hex(const std::array<std::uint8_t, 32>& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(64);
  for (std::uint8_t byte : digest) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0xf]);
  }
  return out;
}

bool same(std::string_view expected, std::string_view received) noexcept {
  return expected.size() == received.size() &&
         CRYPTO_memcmp(expected.data(), received.data(), expected.size()) == 0;
}

bool any_match(const std::vector<std::string>& secrets,
               const std::function<std::string(std::string_view secret)>& expected,
               const std::vector<std::string_view>& received) {
  bool matched = false;
  for (const std::string& secret : secrets) {
    const std::string wanted = expected(secret);
    for (std::string_view candidate : received) matched |= same(wanted, candidate);
  }
  return matched;
}

bool any_match(const std::vector<std::string>& secrets,
               const std::function<std::string(std::string_view secret)>& expected,
               std::initializer_list<std::string_view> received) {
  return any_match(secrets, expected, std::vector<std::string_view>(received));
}

ProviderResult failure(ProviderStatus status, std::string_view header, std::string message) {
  return ProviderResult{status, std::string(header), std::move(message), {}, 0};
}

ProviderResult missing(std::string_view header) {
  return failure(ProviderStatus::missing_header, header, std::string(header) + " is missing");
}

ProviderResult malformed(std::string_view header, std::string_view shape) {
  return failure(ProviderStatus::malformed_header, header,
                 std::string(header) + " must be " + std::string(shape));
}

ProviderResult bad_signature(std::string_view header) {
  return failure(ProviderStatus::bad_signature, header,
                 "no signature in " + std::string(header) + " matches any configured secret");
}

void check_window(ProviderResult& result, std::string_view header, std::int64_t timestamp,
                  std::int64_t now_seconds, const ProviderOptions& options) {
  result.timestamp = timestamp;
  if (!options.check_timestamp) return;
  const std::int64_t tolerance = options.tolerance.count();
  if (timestamp < now_seconds - tolerance) {
    result = failure(ProviderStatus::timestamp_too_old, header,
                     std::string(header) + " is " + std::to_string(now_seconds - timestamp) +
                         " s old; the tolerance is " + std::to_string(tolerance) + " s");
  } else if (timestamp > now_seconds + tolerance) {
    result = failure(ProviderStatus::timestamp_too_new, header,
                     std::string(header) + " is " + std::to_string(timestamp - now_seconds) +
                         " s in the future; the tolerance is " + std::to_string(tolerance) + " s");
  }
  result.timestamp = timestamp;
}

void take_id(ProviderResult& result, std::string_view id, ProviderStatus status,
             std::string_view where) {
  if (!is_valid_webhook_id(id)) {
    result =
        failure(status, status == ProviderStatus::missing_id ? "" : where,
                std::string(where) + " must be 1 to 255 printable ASCII characters without spaces");
    return;
  }
  result.event_id = std::string(id);
}

void take_body_id(ProviderResult& result, std::string_view body, std::string_view field) {
  const nlohmann::json payload = parse_json_or_discarded(body);
  const std::string quoted = "\"" + std::string(field) + "\"";
  if (!payload.is_object()) {
    result = failure(ProviderStatus::missing_id, "",
                     "the body is not a JSON object, so it has no " + quoted + " to dedup on");
    return;
  }
  const auto it = payload.find(field);
  if (it == payload.end() || !it->is_string()) {
    result = failure(ProviderStatus::missing_id, "",
                     "the body has no string " + quoted + " to dedup on");
    return;
  }
  const std::string where = "the body's " + quoted;
  take_id(result, it->get_ref<const std::string&>(), ProviderStatus::missing_id, where);
}

ProviderResult timestamped(std::string_view header, std::int64_t timestamp,
                           std::int64_t now_seconds, const ProviderOptions& options,
                           std::string_view body, std::string_view field) {
  ProviderResult result;
  check_window(result, header, timestamp, now_seconds, options);
  if (!result) return result;
  take_body_id(result, body, field);
  return result;
}

std::vector<std::string> checked(std::vector<std::string> secrets) {
  if (secrets.empty()) {
    throw Error(ErrorCode::invalid_argument, "a provider verifier needs at least one secret");
  }
  for (const std::string& secret : secrets) {
    if (secret.empty()) throw Error(ErrorCode::invalid_secret, "a provider secret is empty");
  }
  return secrets;
}

}  // namespace detail

namespace {

// Each provider once: its name and its steps (none for standard: webhooks::Verifier).
struct Known {
  Provider provider;
  std::string_view name;
  const detail::Steps* steps;
};
const Known kKnown[] = {{Provider::standard, "standard", nullptr},
                        {Provider::stripe, "stripe", &detail::kStripeSteps},
                        {Provider::github, "github", &detail::kGithubSteps},
                        {Provider::shopify, "shopify", &detail::kShopifySteps},
                        {Provider::slack, "slack", &detail::kSlackSteps}};

const Known* known(Provider provider) noexcept {
  for (const Known& k : kKnown) {
    if (k.provider == provider) return &k;
  }
  return nullptr;
}

}  // namespace

std::string_view to_string(Provider provider) noexcept {
  const Known* k = known(provider);
  return k != nullptr ? k->name : "unknown";
}

std::optional<Provider> parse_provider(std::string_view name) noexcept {
  for (const Known& k : kKnown) {
    if (k.name == name) return k.provider;
  }
  return std::nullopt;
}

constexpr EnumNames<ProviderStatus, 7> kProviderStatusNames{
    {"ok", "missing_header", "malformed_header", "bad_signature", "timestamp_too_old",
     "timestamp_too_new", "missing_id"},
    "unknown"};
std::string_view to_string(ProviderStatus status) noexcept {
  return kProviderStatusNames.name(status);
}

namespace detail {
namespace {

// The one ProviderVerifier: a provider's steps with its checked secrets and options.
class StepsVerifier final : public ProviderVerifier {
 public:
  StepsVerifier(Provider provider, const Steps& steps, std::vector<std::string> secrets,
                ProviderOptions options)
      : provider_(provider),
        steps_(steps),
        secrets_(checked(std::move(secrets))),
        options_(options) {}
  Provider provider() const noexcept override { return provider_; }
  std::optional<std::string_view> event_type(const HeaderLookup& headers) const override {
    if (steps_.event_type == nullptr) return std::nullopt;
    return steps_.event_type(headers);
  }
  ProviderResult verify(const HeaderLookup& headers, std::string_view body,
                        std::int64_t now_seconds) const override {
    return steps_.verify(secrets_, options_, headers, body, now_seconds);
  }

 private:
  Provider provider_;
  const Steps& steps_;
  std::vector<std::string> secrets_;
  ProviderOptions options_;
};

}  // namespace
}  // namespace detail

std::unique_ptr<ProviderVerifier> make_provider_verifier(Provider provider,
                                                         std::vector<std::string> secrets,
                                                         ProviderOptions options) {
  const Known* k = known(provider);
  const detail::Steps* steps = k != nullptr ? k->steps : nullptr;
  if (steps == nullptr) {
    throw Error(ErrorCode::invalid_argument,
                "the standard provider is verified by webhooks::Verifier, not a provider "
                "verifier");
  }
  return std::make_unique<detail::StepsVerifier>(provider, *steps, std::move(secrets), options);
}

}  // namespace webhooks::providers
