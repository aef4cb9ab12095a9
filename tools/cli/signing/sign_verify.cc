// webhooks sign / webhooks verify: Standard Webhooks v1 from the terminal.
#include <iostream>
#include <optional>

#include "cli.h"
#include "header_lines.h"
#include "signing/signing_flags.h"
#include "signing/verify_provider.h"
#include "webhooks/app/deprecated_flags.h"
#include "webhooks/app/flags.h"
#include "webhooks/clock.h"
#include "webhooks/ed25519.h"
#include "webhooks/verifier.h"
#include "webhooks/wire.h"

namespace webhooks::cli {

namespace {

struct SignArgs {
  SigningKeys keys;
  std::string id, body_file;
  std::int64_t timestamp = 0;
};

}  // namespace

void add_sign(CLI::App& app, Action& action) {
  auto args = std::make_shared<SignArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sign", "Print the three Standard Webhooks headers for a body, one 'name: value' per line");
  add_signing_flags(*cmd, args->keys);
  cmd->add_option("--id", args->id, "webhook-id (the event id)")->required();
  cmd->add_option("--timestamp", args->timestamp, "webhook-timestamp, Unix seconds")
      ->required()
      ->check(app::unix_seconds(9'999'999'999));  // webhook-timestamp: at most 10 digits
  cmd->add_option("--body-file", args->body_file, "file with the raw body ('-' for stdin)")
      ->required();
  cmd->callback([args, &action] {
    action = [args] {
      if (!is_valid_webhook_id(args->id)) {
        throw UsageError("--id must be 1 to 255 printable ASCII characters without spaces");
      }
      const std::string body = read_input(args->body_file);
      const std::string signature =
          signature_value(args->keys, "sign", args->id, args->timestamp, body);
      std::cout << kHeaderId << ": " << args->id << "\n"
                << kHeaderTimestamp << ": " << args->timestamp << "\n"
                << kHeaderSignature << ": " << signature << "\n";
      return kOk;
    };
  });
}

namespace {

struct VerifyArgs {
  std::string provider = "standard";
  std::vector<std::string> secrets, public_keys;
  std::string headers_file, body_file;
  std::int64_t tolerance = 300;
  bool no_tolerance = false;
  std::optional<std::int64_t> now;
};

void add_verify_options(CLI::App& cmd, VerifyArgs& args) {
  cmd.add_option("--provider", args.provider,
                 "whose delivery: standard, stripe, github, shopify or slack")
      ->check(app::provider_name())
      ->capture_default_str();
  app::add_secret_option(cmd,
                         {"--secret", "WEBHOOKS_SECRET",
                          "whsec_… secret (other providers: their raw secret); repeat for rotation",
                          app::provider_secret(&args.provider)},
                         args.secrets);
  cmd.add_option("--public-key", args.public_keys, "whpk_… Ed25519 key for v1a; repeatable")
      ->check(app::accepted_by("whpk_...",
                               [](const std::string& text) { Ed25519PublicKey::parse(text); }));
  cmd.add_option("--headers-file", args.headers_file, "file of 'name: value' lines")->required();
  cmd.add_option("--body-file", args.body_file, "file with the raw body ('-' for stdin)")
      ->required();
  auto* tolerance = app::add_whole_seconds(cmd, "--tolerance", args.tolerance,
                                           "accepted clock difference, both directions (0s: none)",
                                           app::Zero::allowed);
  cmd.add_flag("--no-tolerance", args.no_tolerance,
               "skip the timestamp window (replaying old captures)")
      ->excludes(tolerance);
  cmd.add_option("--now", args.now, "verify as of this Unix time in seconds (default: now)")
      ->check(app::unix_seconds());
}

int run_verify(const VerifyArgs& args) {
  std::string refusal;
  const receiver::Headers headers = parse_header_lines(read_input(args.headers_file), refusal);
  const auto refused = [&] {
    std::cout << "invalid: bad_request: " << refusal << "\n";
    return kFailed;
  };
  if (args.provider != "standard") {
    if (!args.public_keys.empty()) throw UsageError("--public-key is for --provider standard");
    if (args.secrets.empty()) {
      throw UsageError("verify --provider " + args.provider +
                       " needs the provider's secret: give --secret, --secret-file or "
                       "WEBHOOKS_SECRET (or WEBHOOKS_SECRET_FILE)");
    }
    if (!refusal.empty()) return refused();
    return verify_provider(*providers::parse_provider(args.provider), args.secrets, headers,
                           read_input(args.body_file),
                           {std::chrono::seconds(args.tolerance), !args.no_tolerance},
                           args.now.value_or(system_clock().now_seconds()));
  }
  if (args.secrets.empty() && args.public_keys.empty()) {
    throw UsageError(
        "verify needs --secret or --public-key: give --secret, --secret-file or WEBHOOKS_SECRET "
        "(v1), or --public-key (v1a)");
  }
  std::vector<Secret> secrets;
  for (const auto& s : args.secrets) secrets.push_back(Secret::parse(s));
  std::vector<Ed25519PublicKey> keys;
  for (const auto& k : args.public_keys) keys.push_back(Ed25519PublicKey::parse(k));
  if (!refusal.empty()) return refused();
  const std::string body = read_input(args.body_file);
  const Verifier verifier(secrets, keys,
                          {std::chrono::seconds(args.tolerance), !args.no_tolerance});
  std::optional<std::string> signature;
  SignedHeaders signed_headers;
  VerifyResult result = receiver::read_signed_headers(headers, signed_headers, signature);
  if (result) {
    result = verifier.verify(signed_headers, body, args.now.value_or(system_clock().now_seconds()));
  }
  if (result) {
    std::cout << "valid\n";
    return kOk;
  }
  std::cout << "invalid: " << to_string(result.status) << ": " << result.message << "\n";
  return kFailed;
}

}  // namespace

void add_verify(CLI::App& app, Action& action) {
  auto args = std::make_shared<VerifyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "verify", "Check a delivery's signature and timestamp; say valid, or exactly why not");
  add_verify_options(*cmd, *args);
  cmd->callback([args, &action] { action = [args] { return run_verify(*args); }; });
}

}  // namespace webhooks::cli
