// The signing flags of `webhooks sign` and `webhooks send`: a v1 secret, a v1a signing key, or
// both (Standard Webhooks v1, section "Signature scheme"; v1a: Ed25519).
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>
#include <string_view>

namespace webhooks::cli {

struct SigningKeys {
  std::string secret;       // whsec_… (or its bare base64): a v1 entry
  std::string signing_key;  // whsk_…: a v1a entry
};

// Adds --secret (--secret-file, WEBHOOKS_SECRET) and --signing-key (--signing-key-file,
// WEBHOOKS_SIGNING_KEY) to `cmd`; each value is checked while parsing (a usage error, exit 2).
void add_signing_flags(CLI::App& cmd, SigningKeys& keys);

// Throws UsageError ("<command> needs --secret or --signing-key: give …", naming every way to
// give each) when `keys` holds neither.
void require_key(const SigningKeys& keys, std::string_view command);

// The webhook-signature value for `body` sent as `id` at `timestamp` (Unix seconds): a v1 entry
// for the secret, a v1a entry for the signing key, both (v1 first, separated by a space) when
// both are given. Throws as require_key() does.
std::string signature_value(const SigningKeys& keys, std::string_view command, std::string_view id,
                            std::int64_t timestamp, std::string_view body);

}  // namespace webhooks::cli
