// build/bin/merchant-receiver: a merchant's webhook endpoint. POST /webhooks verifies, dedups and
// handles order.* and payout.* events in transactional mode; GET /handled shows what was handled.
// Flags: DESIGN.md, "Interfaces that scripts rely on"; docs/receiver.md. The secrets may also come
// from --secret-file or WEBHOOKS_SECRET (webhooks/app/secret_flags.h).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>
#include <thread>

#include "merchant.h"
#include "webhooks/app/deprecated_flags.h"
#include "webhooks/app/flags.h"
#include "webhooks/app/secret_flags.h"
#include "webhooks/app/server.h"
#include "webhooks/ed25519.h"
#include "webhooks/log.h"
#include "webhooks/receiver/http_server.h"

namespace {

struct Flags {
  std::string listen = "127.0.0.1:8783";
  std::string db = "./merchant.db";
  std::vector<std::string> secrets;
  std::string provider = "standard";
  std::vector<std::string> public_keys;  // whpk_…: v1a (Ed25519) signatures
  std::string consumer = "merchant";
  double lease_s = 30, ttl_s = 7 * 24 * 3600;
  std::int64_t tolerance_s = 300;
  int max_connections = 4096;
  int max_buffered_bytes = 64 * 1024 * 1024;
  std::int64_t request_timeout_ms = 30'000;
  std::string log_level = "info";
  std::string sqlite_synchronous = "NORMAL";
  int fiber_threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  merchant::Faults faults;
};

int run(const Flags& flags) {
  webhooks::receiver::Config config;
  config.secrets = flags.secrets;
  config.provider = *webhooks::providers::parse_provider(flags.provider);
  config.public_keys = flags.public_keys;
  config.consumer = flags.consumer;
  config.store = flags.db;
  config.lease = webhooks::app::seconds_to_millis(flags.lease_s);
  config.ttl = webhooks::app::seconds_to_millis(flags.ttl_s);
  config.tolerance = std::chrono::seconds(flags.tolerance_s);
  // WAL checkpoints (SQLite) off the commit path, as webhooks-publisherd: a checkpoint inside a
  // commit fdatasyncs twice while every delivery queued behind that commit waits.
  config.database.sqlite_background_checkpoint = true;
  config.database.sqlite_synchronous = flags.sqlite_synchronous;
  if (config.lease < std::chrono::seconds(3)) {
    config.maintenance_interval = std::max(config.lease, std::chrono::milliseconds(100));
  }
  webhooks::receiver::Receiver receiver(config);
  merchant::create_tables(receiver.database());
  merchant::Merchant shop(receiver.database(), flags.faults);

  webhooks::http::Server server;
  // GitHub may send its deliveries as forms (payload=<JSON>, docs/receiver.md, "GitHub").
  webhooks::receiver::limit_request_bodies(server, config.max_body_bytes, nullptr,
                                           config.provider == webhooks::providers::Provider::github
                                               ? webhooks::http::Bodies::json_or_form
                                               : webhooks::http::Bodies::json);
  server.Post("/webhooks", [&](const httplib::Request& req, httplib::Response& res) {
    auto answer =
        receiver.handle(webhooks::receiver::headers_of(req), req.body,
                        [&](const webhooks::receiver::Event& e, webhooks::db::Transaction& tx) {
                          return shop.handle(e, tx);
                        });
    webhooks::receiver::write_answer(std::move(answer), res);
  });
  server.Get("/handled", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(shop.handled_json(), "application/json");
  });
  webhooks::app::ServerTuning tuning;
  tuning.max_connections = static_cast<std::size_t>(flags.max_connections);
  tuning.max_buffered_bytes = static_cast<std::size_t>(flags.max_buffered_bytes);
  tuning.request_timeout = std::chrono::milliseconds(flags.request_timeout_ms);
  // The handler only writes through its transaction: it may run on fibers (docs/http-server.md).
  tuning.fiber_threads = static_cast<std::size_t>(flags.fiber_threads);
  const int port =
      webhooks::app::bind_and_announce(server, webhooks::app::parse_listen(flags.listen), tuning);
  const webhooks::app::StopOnSignal stop(server, port);
  server.listen_after_bind();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  webhooks::app::tune_malloc();
  webhooks::app::block_stop_signals();
  using webhooks::app::duration;
  using webhooks::app::DurationUnit;
  Flags flags;
  CLI::App app{"merchant-receiver: an example merchant's idempotent webhook endpoint"};
  app.add_option("--listen", flags.listen, "HOST:PORT (port 0 picks a free port)")
      ->check(webhooks::app::listen_address())
      ->capture_default_str();
  app.add_option("--db", flags.db, "SQLite path or postgres:// URL")->capture_default_str();
  app.add_option("--provider", flags.provider,
                 "whose webhooks: standard, stripe, github, shopify or slack (docs/receiver.md)")
      ->check(webhooks::app::provider_name())
      ->capture_default_str();
  webhooks::app::add_secret_option(
      app,
      {"--secret", "WEBHOOKS_SECRET",
       "signing secret whsec_... (repeatable: rotation); with --provider other than standard, "
       "the provider's secret as it shows it",
       webhooks::app::provider_secret(&flags.provider)},
      flags.secrets);
  app.add_option("--public-key", flags.public_keys,
                 "Ed25519 public key whpk_... for v1a signatures (repeatable: rotation); "
                 "--secret, --public-key or both")
      ->check(webhooks::app::accepted_by(
          "whpk_...", [](const std::string& key) { webhooks::Ed25519PublicKey::parse(key); }));
  app.add_option("--consumer", flags.consumer, "dedup scope")->capture_default_str();
  using webhooks::app::StoreAs;
  webhooks::app::add_duration(app, "--lease", flags.lease_s, StoreAs::seconds, "handler lease")
      ->transform(webhooks::app::deprecated_bare_number("--lease", DurationUnit::seconds));
  webhooks::app::add_duration(app, "--ttl", flags.ttl_s, StoreAs::seconds, "dedup record lifetime")
      ->transform(webhooks::app::deprecated_bare_number("--ttl", DurationUnit::seconds));
  webhooks::app::add_whole_seconds(app, "--tolerance", flags.tolerance_s,
                                   "timestamp tolerance, whole seconds");
  app.add_option("--max-connections", flags.max_connections,
                 "open client connections at most; beyond it the one waiting the longest without a "
                 "whole request is closed")
      ->check(webhooks::app::count(1, 1'000'000))
      ->capture_default_str();
  app.add_option("--max-buffered-bytes", flags.max_buffered_bytes,
                 "request bytes every connection together may hold buffered (heads, bodies being "
                 "received); a "
                 "request that would pass it is answered 503 server_busy with Retry-After")
      ->check(webhooks::app::count(65536, 2147483647))
      ->capture_default_str();
  CLI::Option* request_timeout = webhooks::app::add_duration(
      app, "--request-timeout", flags.request_timeout_ms, StoreAs::milliseconds,
      "time for a request's head and body to arrive, from its first byte; 408 after");
  webhooks::app::add_deprecated_alias(app, request_timeout, "--request-timeout-ms",
                                      webhooks::app::OldValue::milliseconds);
  app.add_option("--log-level", flags.log_level, "debug, info, warn or error")
      ->transform(webhooks::app::log_levels())
      ->capture_default_str();
  app.add_option("--sqlite-synchronous", flags.sqlite_synchronous,
                 "SQLite PRAGMA synchronous: NORMAL (an answered event survives a crash of this "
                 "process), FULL or EXTRA (also a power loss or an OS crash)")
      ->transform(webhooks::app::sqlite_synchronous_values())
      ->capture_default_str();
  app.add_option(
         "--fiber-threads", flags.fiber_threads,
         "event-loop threads, each reading its connections and running their handlers on fibers "
         "(default: the number of cores), 0 to 1024; 0: one loop and a pool of 64 threads, one "
         "request each")
      ->check(webhooks::app::count(0, 1024))
      ->capture_default_str();
  app.add_option("--fail-first-attempts", flags.faults.fail_first_attempts_percent,
                 "fail the first call of this percentage of events (by hash of the event id)")
      ->check(webhooks::app::count(0, 100));
  app.add_option("--crash-on-event", flags.faults.crash_on_event,
                 "SIGKILL this process inside the handler of the Nth new event")
      ->check(webhooks::app::count(0));
  if (const auto exit_code = webhooks::app::parse_command_line(app, argc, argv)) {
    return *exit_code;
  }
  if (flags.secrets.empty() && flags.public_keys.empty()) {
    std::cerr
        << "--secret or --public-key is required (--secret may also come from --secret-file, "
           "WEBHOOKS_SECRET or WEBHOOKS_SECRET_FILE)\nRun with --help for more information.\n";
    return webhooks::app::kUsageExitCode;
  }
  webhooks::configure_json_logging(flags.log_level);
  try {
    return run(flags);
  } catch (const std::exception& e) {
    std::cerr << "merchant-receiver: " << e.what() << std::endl;
    return 1;
  }
}
