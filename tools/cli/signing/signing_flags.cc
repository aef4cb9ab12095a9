#include "signing/signing_flags.h"

#include "cli.h"
#include "webhooks/ed25519.h"
#include "webhooks/signer.h"

namespace webhooks::cli {

void add_signing_flags(CLI::App& cmd, SigningKeys& keys) {
  app::add_secret_option(
      cmd,
      {"--secret", "WEBHOOKS_SECRET", "whsec_… secret (or its bare base64): a v1 signature",
       app::signing_secret()},
      keys.secret);
  app::add_secret_option(
      cmd,
      {"--signing-key", "WEBHOOKS_SIGNING_KEY", "whsk_… Ed25519 signing key: a v1a signature",
       app::accepted_by("whsk_...",
                        [](const std::string& text) { Ed25519SigningKey::parse(text); })},
      keys.signing_key);
}

void require_key(const SigningKeys& keys, std::string_view command) {
  if (keys.secret.empty() && keys.signing_key.empty()) {
    throw UsageError(std::string(command) +
                     " needs --secret or --signing-key: give --secret, --secret-file or "
                     "WEBHOOKS_SECRET (v1), or --signing-key, --signing-key-file or "
                     "WEBHOOKS_SIGNING_KEY (v1a)");
  }
}

std::string signature_value(const SigningKeys& keys, std::string_view command, std::string_view id,
                            std::int64_t timestamp, std::string_view body) {
  require_key(keys, command);
  std::string value;
  if (!keys.secret.empty()) value = Signer(Secret::parse(keys.secret)).sign(id, timestamp, body);
  if (!keys.signing_key.empty()) {
    if (!value.empty()) value += ' ';
    value += Ed25519SigningKey::parse(keys.signing_key).sign(id, timestamp, body);
  }
  return value;
}

}  // namespace webhooks::cli
